import { isMap, isNode, isPair, isScalar, LineCounter, type Document } from "yaml";
import { parseDocumentUnique } from "../yaml/unique-keys.js";
import type * as z from "zod";
import { DEFAULT_CONFIG_CONTEXT, type ConfigContext } from "./config-context.js";
import { registryRuleProblems } from "./registry-rules.js";
import { withImpliedEntries } from "./generate-schema.js";
import { configSchema, crossFieldProblems, type FerryConfig } from "./schema.js";
import { soakWarnings } from "./soak-warnings.js";
import { notifyWarnings } from "./notify-warnings.js";

export const CONFIG_PATH = ".github/ferry.yml";
/** Config files are small; anything bigger is a mistake or an attack (docs/reliability.md row 29). */
export const MAX_CONFIG_BYTES = 256 * 1024;

export interface ConfigProblem {
  /** Dotted path of the offending field, e.g. `environments.prod.soak`; empty for the whole file. */
  path: string;
  message: string;
  /** 1-based position of the offending node (or its nearest existing parent). */
  line: number;
  column: number;
}

export type LoadConfigResult =
  { ok: true; config: FerryConfig; warnings: ConfigProblem[] } | { ok: false; problems: ConfigProblem[] };

/**
 * Parses and validates `.github/ferry.yml`, reporting every problem at once with its path and
 * line:column, so a check run can annotate each offending line. `context` says what this Ferry
 * allows a config to ask of it (registry-rules.ts); its warnings come back with a valid config.
 */
export function loadConfig(text: string, context: ConfigContext = DEFAULT_CONFIG_CONTEXT): LoadConfigResult {
  if (Buffer.byteLength(text, "utf8") > MAX_CONFIG_BYTES) {
    return {
      ok: false,
      problems: [
        { path: "", message: `config is larger than ${MAX_CONFIG_BYTES} bytes`, line: 1, column: 1 },
      ],
    };
  }
  const lineCounter = new LineCounter();
  const document = parseDocumentUnique(text, { lineCounter, prettyErrors: false });
  const position = (offset: number | undefined): { line: number; column: number } => {
    if (offset === undefined) return { line: 1, column: 1 };
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  if (document.errors.length > 0) {
    return {
      ok: false,
      problems: document.errors.map((error) => ({
        path: "",
        message: `YAML: ${error.message.split("\n")[0]}`,
        ...position(error.pos[0]),
      })),
    };
  }
  let data: unknown;
  try {
    // Aliases are capped: a "billion laughs" config fails here instead of exhausting memory.
    data = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return {
      ok: false,
      problems: [{ path: "", message: `YAML: ${(error as Error).message}`, line: 1, column: 1 }],
    };
  }
  data = withImpliedEntries(data ?? {});
  const parsed = configSchema.safeParse(data);
  const rules = registryRuleProblems(data, context);
  const located = (issues: { path: string[]; message: string }[]): ConfigProblem[] =>
    locateIn(document, position, issues);
  if (parsed.success && rules.errors.length === 0)
    return {
      ok: true,
      config: parsed.data,
      warnings: located([
        ...rules.warnings,
        ...soakWarnings(parsed.data),
        ...notifyWarnings(parsed.data, context),
      ]),
    };
  if (parsed.success) return { ok: false, problems: located(rules.errors) };
  // Zod skips refinements of an object whose fields failed; run the cross-field checks anyway so
  // that every problem is reported at once.
  const issues = schemaProblems(parsed.error.issues, data);
  for (const problem of [...crossFieldProblems(data), ...rules.errors]) {
    if (
      !issues.some(
        (issue) => issue.path.join(".") === problem.path.join(".") && issue.message === problem.message,
      )
    )
      issues.push(problem);
  }
  return { ok: false, problems: located(issues) };
}

/**
 * Problems placed in the config text: each at its `at` path (default: its own path), or at the
 * nearest part of it the file has, sorted by position.
 */
export function locateProblems(
  text: string,
  issues: { path: string[]; message: string; at?: string[] }[],
): ConfigProblem[] {
  const lineCounter = new LineCounter();
  const document = parseDocumentUnique(text, { lineCounter, prettyErrors: false });
  return locateIn(
    document,
    (offset) => {
      if (offset === undefined) return { line: 1, column: 1 };
      const { line, col } = lineCounter.linePos(offset);
      return { line, column: col };
    },
    issues,
  );
}

function locateIn(
  document: Document,
  position: (offset: number | undefined) => { line: number; column: number },
  issues: { path: string[]; message: string; at?: string[] }[],
): ConfigProblem[] {
  return issues
    .map((issue) => ({
      path: issue.path.join("."),
      message: issue.message,
      ...position(offsetOf(document, issue.at ?? issue.path)),
    }))
    .sort((a, b) => a.line - b.line || a.column - b.column);
}

/**
 * Zod's generic wording, said the way a person fixes it: a required key that is absent is
 * "missing" (not "expected string, received undefined"), and a refused record key (an image or
 * environment name) gives the key's own rule instead of "Invalid key in record".
 */
/** Zod's issues as problems: each unknown key at its own line (a typo or a secret pasted inline), not at its parent. */
export function schemaProblems(
  issues: z.core.$ZodIssue[],
  data: unknown,
): { path: string[]; message: string }[] {
  return issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({
          path: [...issue.path.map(String), key],
          message: `unknown key ${JSON.stringify(key)}`,
        }))
      : [{ path: issue.path.map(String), message: issueMessage(issue, data) }],
  );
}

function issueMessage(issue: z.core.$ZodIssue, data: unknown): string {
  if (issue.code === "invalid_type" && issue.path.length > 0) {
    const key = issue.path[issue.path.length - 1]!;
    const parent = issue.path
      .slice(0, -1)
      .reduce<unknown>((node, segment) => (isObject(node) ? node[segment as string] : undefined), data ?? {});
    if (isObject(parent) && !(String(key) in parent))
      return `missing required key ${JSON.stringify(String(key))}`;
  }
  if (issue.code === "invalid_key" && issue.issues[0] !== undefined) return issue.issues[0].message;
  return issue.message;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The source offset of the node at `path`, or of its nearest existing ancestor. */
function offsetOf(document: Document, path: string[]): number | undefined {
  for (let length = path.length; length >= 0; length--) {
    const prefix = path.slice(0, length);
    const node = length === 0 ? document.contents : document.getIn(prefix, true);
    if (!isNode(node)) continue;
    // For a key that is present, point at the key (more useful in an editor than the value).
    if (length > 0) {
      const parent = length === 1 ? document.contents : document.getIn(prefix.slice(0, -1), true);
      if (isMap(parent)) {
        const pair = parent.items.find(
          (item) => isPair(item) && isScalar(item.key) && String(item.key.value) === prefix[length - 1],
        );
        if (pair && isScalar(pair.key) && pair.key.range) return pair.key.range[0];
      }
    }
    return node.range?.[0];
  }
  return undefined;
}

/** One line per problem: `FILE:LINE:COL message (path)`, the format of `ferry check`. */
export function formatProblems(file: string, problems: ConfigProblem[]): string {
  return problems
    .map(
      (problem) =>
        `${file}:${problem.line}:${problem.column} ${problem.message}${problem.path ? ` (${problem.path})` : ""}`,
    )
    .join("\n");
}
