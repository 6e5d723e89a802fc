import type { GitHubRepoPort } from "../../app/github-port.js";
import type { AccessCache } from "./access-cache.js";
import type { GitContentCache } from "./git-content-cache.js";
import { checksOf } from "./github-repo-checks.js";
import { githubRepoContext, type OctokitLike } from "./github-repo-context.js";
import { gitDataOf } from "./github-repo-git-data.js";
import { healthOf } from "./github-repo-health.js";
import { issuesOf } from "./github-repo-issues.js";
import { ledgerOf } from "./github-repo-ledger.js";
import { pullsOf } from "./github-repo-pulls.js";
import { statusesOf } from "./github-repo-statuses.js";

export type { OctokitLike } from "./github-repo-context.js";

/** The assembled adapter: every role, with the port's optional members all present. */
export type GitHubRepoAdapter = Required<GitHubRepoPort>;

/**
 * Every role of the GitHub port (`GitHubRepoPort`) over Octokit REST, and GraphQL mutations for
 * native auto-merge, the merge queue and pinning the dashboard. Every write is an upsert or a
 * compare-and-swap; nothing is forced (docs/reliability.md rows 22–24).
 *
 * Each group of roles is its own module (`github-repo-git-data.ts`, `github-repo-pulls.ts`,
 * `github-repo-issues.ts`, `github-repo-checks.ts`) over one shared context
 * (`github-repo-context.ts`). The methods are closures: they need no `this` and may be passed around
 * unbound.
 */
export function createGitHubRepo(
  octokit: OctokitLike,
  owner: string,
  repo: string,
  /** Process-wide cache of trees and blobs by SHA (content addresses never go stale). */
  cache?: GitContentCache,
  /** Process-wide cache of low permission answers (a flood of refused commands costs one lookup). */
  access?: AccessCache,
): GitHubRepoAdapter {
  const ctx = githubRepoContext(octokit, owner, repo, cache, access);
  return {
    owner,
    repo,
    ...gitDataOf(ctx),
    ...pullsOf(ctx),
    ...issuesOf(ctx),
    ...checksOf(ctx),
    ...healthOf(ctx),
    ...statusesOf(ctx),
    ...ledgerOf(ctx),
  };
}
