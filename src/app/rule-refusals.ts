/**
 * Environments whose branch write a repository ruleset refused (docs/reliability.md row 58).
 * The refusal is said once, on the dashboard, in the rule's words; the environment is not written
 * again while the config and the branch's rules stay as they were when it was refused: each scan
 * re-reads the rules (`GET /rules/branches/{branch}` and the rulesets' versions, read access only),
 * and a `repository_ruleset` event starts a sync that does the same at once.
 */
import { createHash } from "node:crypto";
import type { FerryConfig } from "../core/config/schema.js";
import type { RuleViolationError } from "../core/rule-violation.js";
import type { GitHubBranches } from "./github-port.js";

interface Refusal {
  fingerprint: string | undefined;
  config: string;
  message: string;
}

/** Refusals kept per process (one per repository and environment, at most this many). */
const MAX_REFUSALS = 10_000;

export class RuleRefusals {
  readonly #byKey = new Map<string, Refusal>();

  get(key: string): Refusal | undefined {
    return this.#byKey.get(key);
  }

  set(key: string, refusal: Refusal): void {
    this.#byKey.delete(key);
    if (this.#byKey.size >= MAX_REFUSALS) this.#byKey.delete(this.#byKey.keys().next().value!);
    this.#byKey.set(key, refusal);
  }

  delete(key: string): void {
    this.#byKey.delete(key);
  }
}

interface Deps {
  github: GitHubBranches & { owner: string; repo: string };
  ruleRefusals?: RuleRefusals;
}

const keyOf = (deps: Deps, environment: string) => `${deps.github.owner}/${deps.github.repo}#${environment}`;
const configKey = (config: FerryConfig) => createHash("sha256").update(JSON.stringify(config)).digest("hex");

/**
 * The message of a refusal that still stands for `environment` (same config, same rules), or
 * undefined when there is none or something changed (then it is forgotten and the write is tried).
 */
export async function standingRefusal(
  deps: Deps,
  config: FerryConfig,
  environment: string,
  branch: string,
): Promise<string | undefined> {
  const refusal = deps.ruleRefusals?.get(keyOf(deps, environment));
  if (!refusal) return undefined;
  const unchanged =
    refusal.config === configKey(config) &&
    refusal.fingerprint !== undefined &&
    refusal.fingerprint === (await deps.github.branchRulesFingerprint?.(branch));
  if (unchanged) return refusal.message;
  deps.ruleRefusals?.delete(keyOf(deps, environment));
  return undefined;
}

/** Records a refusal with the rules and config it was met under. */
export async function recordRefusal(
  deps: Deps,
  config: FerryConfig,
  environment: string,
  error: RuleViolationError,
): Promise<void> {
  if (!deps.ruleRefusals) return;
  const fingerprint = await deps.github.branchRulesFingerprint?.(error.branch);
  deps.ruleRefusals.set(keyOf(deps, environment), {
    fingerprint,
    config: configKey(config),
    message: error.message,
  });
}
