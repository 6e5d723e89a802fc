import { YAMLParseError } from "yaml";
import { parseUnique } from "../yaml/unique-keys.js";
import { UserError } from "../errors.js";
import { policySchema, resolvePolicy, type Policy } from "./schema.js";

export class InvalidPolicyError extends UserError {
  constructor(message: string) {
    super("invalid-policy", message);
  }
}

/**
 * Reads one tag policy from YAML or JSON text (JSON is YAML) or an already-parsed object, checks
 * it against `policySchema` and fills its defaults. Throws an InvalidPolicyError whose one-line
 * message names the first offending field: `policy.range: invalid semver range: improper constraint: "x"`.
 */
export function parsePolicy(input: string | unknown): Policy {
  let value: unknown = input;
  if (typeof input === "string") {
    try {
      // Bounded like every user YAML Ferry reads (docs/reliability.md row 29: alias bombs).
      value = parseUnique(input, { maxAliasCount: 100 });
    } catch (error) {
      const detail = error instanceof YAMLParseError ? error.message.split("\n")[0] : String(error);
      throw new InvalidPolicyError(`policy: invalid YAML: ${detail}`);
    }
  }
  // An empty document is the empty policy: semver, every release.
  if (value === null || value === undefined) value = {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidPolicyError(
      `policy: expected a mapping of policy fields (strategy, range, allow…), got ${describe(value)}`,
    );
  }
  const result = policySchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const segments = ["policy", ...issue.path.map(String)];
    // zod reports unknown keys on their parent; name the (first) key itself.
    if (issue.code === "unrecognized_keys" && issue.keys[0] !== undefined) segments.push(issue.keys[0]);
    const path = segments.join(".");
    throw new InvalidPolicyError(`${path}: ${issueMessage(issue)}`);
  }
  return resolvePolicy(result.data);
}

function issueMessage(issue: { code: string; message: string; keys?: string[] }): string {
  // zod names unknown keys on the parent; say which key and what is allowed instead.
  if (issue.code === "unrecognized_keys" && issue.keys !== undefined) {
    return `unknown field (known: ${Object.keys(policySchema.shape).join(", ")})`;
  }
  return issue.message;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`;
  return `${typeof value} ${String(value)}`;
}
