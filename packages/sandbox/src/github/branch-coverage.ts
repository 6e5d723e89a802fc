/**
 * Whether GitHub calls a branch `protected` (`GET /repos/{o}/{r}/branches/{b}`, list branches,
 * the branches of a `status` event): classic branch protection, or any active branch ruleset
 * that targets it. A branch covered by a ruleset alone reads `protected: true` while
 * `GET /branches/{b}/protection` still answers 404 "Branch not protected" (seen by API clients:
 * https://github.com/hub4j/github-api/issues/2062; a ruleset with only a metadata restriction is
 * enough, https://github.com/crs-k/stale-branches/issues/1061).
 */
import { rulesetsFor } from "./emulator-repos.js";
import type { Repo } from "./model.js";

/** Whether some ruleset of the repository applies to `branch` (the rulesets' own conditions decide). */
export function isBranchCoveredByRuleset(repo: Repo, branch: string): boolean {
  return rulesetsFor(repo, branch).length > 0;
}

/** GitHub's `protected` flag for a branch. */
export function isBranchProtected(repo: Repo, branch: string): boolean {
  return repo.protections.has(branch) || isBranchCoveredByRuleset(repo, branch);
}
