import { isMap, isScalar, isSeq, LineCounter, parseAllDocuments, type Node } from "yaml";
import { parseAllDocumentsUnique } from "../yaml/unique-keys.js";
import type { ReferenceProblem } from "./check-references.js";

/**
 * No plaintext Secrets in Git (docs/security.md): a Kubernetes `Secret` with `data` or
 * `stringData` in an environment's files, or what Kustomize's `secretGenerator` would make from
 * literals or from files in the repository, is readable by anyone who can read the repository,
 * base64 being no encryption (https://kubernetes.io/docs/concepts/configuration/secret/).
 * What passes: a SOPS-encrypted file (its `sops` metadata, https://github.com/getsops/sops), a
 * SealedSecret (https://github.com/bitnami-labs/sealed-secrets) and an ExternalSecret
 * (https://external-secrets.io), which are other kinds. Pure: texts in, problems out.
 */

export const SECRET_ALTERNATIVES =
  "use a SealedSecret (Bitnami Sealed Secrets), a SOPS-encrypted file, or an ExternalSecret (External Secrets Operator)";

/** At most this many secretGenerator source files are read per check (the caller enforces it too). */
export const MAX_GENERATOR_SOURCES = 200;

/**
 * Which field makes a parsed object a plaintext Secret (`data` or `stringData`, non-empty), or
 * undefined: another kind, an empty Secret (a service-account token Secret), or a SOPS-encrypted one.
 */
export function plaintextSecretField(object: unknown): "data" | "stringData" | undefined {
  if (typeof object !== "object" || object === null || Array.isArray(object)) return undefined;
  const record = object as Record<string, unknown>;
  if (record.kind !== "Secret") return undefined;
  if (record.apiVersion !== undefined && record.apiVersion !== "v1") return undefined;
  if (isSopsMetadata(record.sops)) return undefined;
  for (const field of ["data", "stringData"] as const) {
    const value = record[field];
    if (typeof value === "object" && value !== null && Object.keys(value).length > 0) return field;
  }
  return undefined;
}

/** Whether a `sops:` field is SOPS metadata (it carries a `mac`): the object is SOPS-encrypted. */
export function isSopsMetadata(value: unknown): boolean {
  return typeof value === "object" && value !== null && "mac" in value;
}

/** A file SOPS encrypted (YAML, JSON or dotenv): its metadata travels with it. */
export function isSopsEncrypted(text: string): boolean {
  return /^sops:\s*$/m.test(text) || /"sops"\s*:\s*\{/.test(text) || /^sops_mac=/m.test(text);
}

/** Where a secretGenerator entry reads from, repo-relative, with the line that names it. */
export interface GeneratorSource {
  kustomization: string;
  path: string;
  line: number;
  column: number;
  generator: string;
}

/** The files the `secretGenerator` entries of a kustomization read (`files`, `envs`, `env`). */
export function secretGeneratorSources(file: string, text: string): GeneratorSource[] {
  if (!isKustomizationFile(file)) return [];
  const sources: GeneratorSource[] = [];
  const directory = file.includes("/") ? file.slice(0, file.lastIndexOf("/")) : "";
  forEachGenerator(file, text, (generator, entry, position) => {
    for (const key of ["files", "envs", "env"] as const) {
      const value = entry.get(key, true) as Node | undefined;
      const items = isSeq(value) ? value.items : value !== undefined ? [value] : [];
      for (const item of items) {
        if (!isScalar(item) || typeof item.value !== "string") continue;
        // `files: [key=path]` names the key in the Secret; the file is what follows the `=`.
        const named = key === "files" && item.value.includes("=") ? item.value.split("=", 2)[1]! : item.value;
        const resolved = joinRelative(directory, named);
        if (resolved === undefined) continue;
        sources.push({ kustomization: file, path: resolved, generator, ...position(item) });
      }
    }
  });
  return sources;
}

/**
 * The plaintext Secrets among one environment's files, one failing problem on the exact line
 * (`data:`/`stringData:` of a Secret, the `literals:` of a generator, the line naming a source
 * file). `sources`: the text of each generator source the caller could read (undefined: absent).
 */
export function plaintextSecretProblems(
  files: Map<string, string>,
  sources: Map<string, string | undefined> = new Map(),
): ReferenceProblem[] {
  const problems: ReferenceProblem[] = [];
  for (const [file, text] of files) {
    if (!/\bSecret\b|secretGenerator/.test(text)) continue;
    const lineCounter = new LineCounter();
    let documents;
    try {
      documents = parseAllDocuments(text, { lineCounter, uniqueKeys: false });
    } catch {
      continue; // not YAML: the reference check reports it
    }
    if (!Array.isArray(documents)) continue;
    for (const document of documents) {
      if (document.errors.length > 0) continue;
      const object: unknown = document.toJS({ maxAliasCount: 100 });
      const field = plaintextSecretField(object);
      if (field === undefined || !isMap(document.contents)) continue;
      const pair = document.contents.items.find((item) => isScalar(item.key) && item.key.value === field);
      const offset = (pair?.key as Node | undefined)?.range?.[0] ?? 0;
      const { line, col } = lineCounter.linePos(offset);
      const name = (object as { metadata?: { name?: unknown } }).metadata?.name;
      problems.push({
        file,
        line,
        column: col,
        level: "failure",
        message: `plaintext Secret${typeof name === "string" ? ` ${name}` : ""} (${field}) in Git: anyone who can read the repository can read it; ${SECRET_ALTERNATIVES}`,
      });
    }
    forEachGenerator(file, text, (generator, entry, position) => {
      const literals = entry.get("literals", true) as Node | undefined;
      if (isSeq(literals) && literals.items.length > 0)
        problems.push({
          file,
          ...position(
            entry.items.find((item) => isScalar(item.key) && item.key.value === "literals")!.key as Node,
          ),
          level: "failure",
          message: `secretGenerator ${generator} makes a plaintext Secret from literals in Git; ${SECRET_ALTERNATIVES}`,
        });
    });
    for (const source of secretGeneratorSources(file, text)) {
      const content = sources.get(source.path);
      if (content === undefined || isSopsEncrypted(content)) continue;
      problems.push({
        file,
        line: source.line,
        column: source.column,
        level: "failure",
        message: `secretGenerator ${source.generator} makes a plaintext Secret from ${source.path}, a plaintext file in Git; ${SECRET_ALTERNATIVES}`,
      });
    }
  }
  return problems;
}

function isKustomizationFile(file: string): boolean {
  const base = file.slice(file.lastIndexOf("/") + 1);
  return base === "kustomization.yaml" || base === "kustomization.yml" || base === "Kustomization";
}

type Position = (node: Node) => { line: number; column: number };

function forEachGenerator(
  file: string,
  text: string,
  visit: (generator: string, entry: import("yaml").YAMLMap, position: Position) => void,
): void {
  if (!isKustomizationFile(file) || !text.includes("secretGenerator")) return;
  const lineCounter = new LineCounter();
  let documents;
  try {
    documents = parseAllDocumentsUnique(text, { lineCounter });
  } catch {
    return;
  }
  if (!Array.isArray(documents)) return;
  const position: Position = (node) => {
    const { line, col } = lineCounter.linePos(node.range?.[0] ?? 0);
    return { line, column: col };
  };
  for (const document of documents) {
    if (document.errors.length > 0 || !isMap(document.contents)) continue;
    const generators = document.contents.get("secretGenerator", true) as Node | undefined;
    if (!isSeq(generators)) continue;
    for (const entry of generators.items) {
      if (!isMap(entry)) continue;
      const name = entry.get("name");
      visit(typeof name === "string" ? name : "(unnamed)", entry, position);
    }
  }
}

/** `directory/relative`, normalised; undefined when it leaves the repository or is absolute. */
function joinRelative(directory: string, relative: string): string | undefined {
  if (relative.startsWith("/") || relative.includes("://")) return undefined;
  const parts = directory === "" ? [] : directory.split("/");
  for (const part of relative.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join("/");
}
