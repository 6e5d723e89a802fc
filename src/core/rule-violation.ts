/**
 * A repository ruleset refusing one of Ferry's branch writes (docs/reliability.md row 58).
 * GitHub answers such a write with 422 "Repository rule violations found\n\n" followed by one
 * paragraph per broken rule ("Cannot create ref due to creations being restricted.", "Changes must
 * be made through a pull request.", "Commits must have verified signatures.\nFound 1 violation: …").
 * It is final until the rules or the config change, so it is a UserError, never read as a race.
 */
import { UserError } from "./errors.js";

const PREFIX = "Repository rule violations found";
/** Rule texts kept per refusal, and characters per text (the message is untrusted). */
const MAX_VIOLATIONS = 10;
const MAX_TEXT = 200;

/** The broken rules' texts (each paragraph's first line), or undefined when `message` is no ruleset refusal. */
export function ruleViolations(message: string): string[] | undefined {
  if (!message.startsWith(PREFIX)) return undefined;
  const paragraphs = message.slice(PREFIX.length, PREFIX.length + 10_000).split(/\n\s*\n/);
  const texts = paragraphs
    .map((paragraph) => paragraph.split("\n")[0]!.trim())
    .filter((line) => line !== "" && !/^[0-9a-f]{40}$/.test(line))
    .map((line) => (line.length > MAX_TEXT ? `${line.slice(0, MAX_TEXT)}…` : line));
  return texts.slice(0, MAX_VIOLATIONS);
}

export class RuleViolationError extends UserError {
  constructor(
    readonly branch: string,
    readonly violations: string[],
  ) {
    super("ruleset-refused", refusalText(branch, violations));
  }
}

/** What Ferry says: the rules' own words, then the fix. */
export function refusalText(branch: string, violations: string[]): string {
  const said = violations.length > 0 ? violations.join(" ") : "a rule refused it.";
  return `GitHub's rulesets refused Ferry's write to ${branch}: ${said} Add the Ferry app to the ruleset's bypass list, or exclude refs/heads/ferry/** from it; Ferry tries again when the rules or the config change.`;
}

/** A rule that applies to a branch, as `GET /repos/{o}/{r}/rules/branches/{branch}` lists it. */
export interface BranchRule {
  type: string;
  rulesetId?: number;
  parameters?: unknown;
}

/** A ruleset as `GET /repos/{o}/{r}/rulesets` lists it: `updatedAt` moves with any edit, bypass list included. */
export interface RulesetVersion {
  id: number;
  updatedAt?: string;
  enforcement?: string;
}

/**
 * A stable summary of what may decide a branch write: the branch's rules and every ruleset's
 * version (a bypass list edit shows only in the latter). Equal fingerprints: nothing changed.
 */
export function rulesFingerprint(rules: BranchRule[], rulesets: RulesetVersion[]): string {
  return [
    ...rules.map((rule) => JSON.stringify(["rule", rule.rulesetId ?? 0, rule.type, rule.parameters ?? null])),
    ...rulesets.map((r) => JSON.stringify(["ruleset", r.id, r.updatedAt ?? "", r.enforcement ?? ""])),
  ]
    .sort()
    .join("\n");
}
