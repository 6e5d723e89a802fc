/**
 * `ferry select --policy FILE|YAML [--tags FILE] [--current TAG]` (docs/config.md "CLI"): prints the
 * tag a policy chooses from a tag list, or exits 3 with the reason.
 */
import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { UserError } from "../core/errors.js";
import { isValidTag } from "../core/image-ref.js";
import { parsePolicy } from "../core/policy/parse-policy.js";
import { selectTag, type TagCandidate } from "../core/policy/select-tag.js";
import { EXIT, UsageError, type CliIo } from "./io.js";

const USAGE = "usage: ferry select --policy FILE|YAML [--tags FILE] [--current TAG]";

/** RFC 3339 date-time, e.g. `2024-05-01T12:00:00Z` or `2024-05-01T12:00:00.5+02:00` (no space form: fields split on whitespace). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

export async function run(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      policy: { type: "string" },
      tags: { type: "string" },
      current: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    io.stdout(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (values.policy === undefined || values.policy.trim() === "")
    throw new UsageError(`--policy is required\n${USAGE}`);

  const policy = parsePolicy(await readPolicyText(values.policy, io.cwd));
  const current = values.current;
  if (current !== undefined && !isValidTag(current)) {
    throw new UserError("invalid-tag", `--current ${JSON.stringify(current)} is not a valid OCI tag`);
  }
  const text =
    values.tags !== undefined ? await readUserFile(values.tags, io.cwd, "--tags") : await io.readStdin();
  const candidates = parseTagList(text, values.tags ?? "stdin");

  // A tag list carries no digests, and `pin` only says what Ferry writes, not which tag wins: a
  // policy copied from ferry.yml with `pin: digest` must choose the same tag here.
  const options: Parameters<typeof selectTag>[1] = { policy: { ...policy, pin: "tag" }, now: io.now() };
  if (current !== undefined) options.current = current;
  const selection = selectTag(candidates, options);
  // A running tag outside the policy: kept (say how to move back) or moved back (allowDowngrade).
  if (selection.notice !== undefined) io.stderr(`ferry select: ${selection.notice}\n`);
  if (selection.kind === "none") {
    io.stderr(`ferry select: ${selection.reason}\n`);
    return EXIT.noMatch;
  }
  io.stdout(`${selection.tag}\n`);
  return EXIT.ok;
}

/** `--policy` names a file when one exists at that path; otherwise it is the policy's YAML itself. */
async function readPolicyText(argument: string, cwd: string): Promise<string> {
  const path = resolve(cwd, argument);
  const isFile = await stat(path).then(
    (info) => info.isFile(),
    () => false,
  );
  if (isFile) return readUserFile(argument, cwd, "--policy");
  // A single word that looks like a file name is a missing file, not a YAML string.
  if (/^[^\s:{}[\]]+\.(?:ya?ml|json)$/i.test(argument)) {
    throw new UserError("file-not-found", `--policy: no such file ${JSON.stringify(argument)}`);
  }
  return argument;
}

async function readUserFile(argument: string, cwd: string, flag: string): Promise<string> {
  try {
    return await readFile(resolve(cwd, argument), "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : "cannot be read";
    throw new UserError("file-unreadable", `${flag}: ${JSON.stringify(argument)} ${why}`);
  }
}

/**
 * One tag a line, optionally followed by whitespace and an RFC 3339 created time. Blank lines are
 * skipped; names that are not valid OCI tags are ignored (as the registry would never list them);
 * a malformed time is an error naming its line, since silently dropping it would change minAge
 * and newest-build results.
 */
export function parseTagList(text: string, source: string): TagCandidate[] {
  const candidates: TagCandidate[] = [];
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const raw = lines[index]!;
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    // The common line is one bare valid tag: one scan, nothing to trim, split or match again (a
    // million-line list stays cheap).
    if (isBareTag(line)) {
      candidates.push({ tag: line });
      continue;
    }
    const fields = line.trim().split(/\s+/);
    const tag = fields[0];
    if (tag === undefined || tag === "") continue;
    if (fields.length > 2)
      throw new UserError(
        "invalid-tag-list",
        `${source}:${index + 1}: expected "TAG [CREATED]", got ${fields.length} fields`,
      );
    if (!isValidTag(tag)) continue;
    const candidate: TagCandidate = { tag };
    const created = fields[1];
    if (created !== undefined) {
      const date = new Date(created);
      if (!RFC3339.test(created) || Number.isNaN(date.getTime())) {
        throw new UserError(
          "invalid-tag-list",
          `${source}:${index + 1}: invalid created time ${JSON.stringify(created.slice(0, 40))}, expected RFC 3339 such as 2024-05-01T12:00:00Z`,
        );
      }
      candidate.created = date;
    }
    candidates.push(candidate);
  }
  return candidates;
}

/**
 * Whether a line is exactly one valid OCI tag (`[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`, as
 * `isValidTag`), by one scan of its characters.
 */
function isBareTag(line: string): boolean {
  const length = line.length;
  if (length === 0 || length > 128) return false;
  for (let index = 0; index < length; index++) {
    const code = line.charCodeAt(index);
    const alnum =
      (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
    if (alnum) continue;
    if (index === 0 || (code !== 46 && code !== 45)) return false;
  }
  return true;
}
