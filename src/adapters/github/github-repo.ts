import type { GitHubRepoPort } from "../../app/github-port.js";
import type { AccessCache } from "./access-cache.js";
import { accessOf } from "./github-repo-access.js";
import type { GitContentCache } from "./git-content-cache.js";
import { branchesOf } from "./github-repo-branches.js";
import { checksOf } from "./github-repo-checks.js";
import { commentsOf } from "./github-repo-comments.js";
import { contentsOf } from "./github-repo-contents.js";
import { deploymentsOf } from "./github-repo-deployments.js";
import { githubRepoContext, type OctokitLike } from "./github-repo-context.js";
import { healthOf } from "./github-repo-health.js";
import { issuesOf } from "./github-repo-issues.js";
import { ledgerOf } from "./github-repo-ledger.js";
import { mergesOf } from "./github-repo-merges.js";
import { pullsOf } from "./github-repo-pulls.js";
import { stateRefOf } from "./github-repo-state-ref.js";
import { statusesOf } from "./github-repo-statuses.js";

export type { OctokitLike } from "./github-repo-context.js";

/** The assembled adapter: every role, with the port's optional members all present. */
export type GitHubRepoAdapter = Required<GitHubRepoPort>;

/**
 * Every role of the GitHub port (`GitHubRepoPort`) over Octokit REST, and GraphQL mutations for
 * native auto-merge, the merge queue and pinning the dashboard. Every write is an upsert or a
 * compare-and-swap; nothing is forced (docs/reliability.md rows 22–24).
 *
 * Each group of roles is its own module (`github-repo-*.ts`: contents, branches, state ref, pulls,
 * merges, issues, comments, access, checks, deployments, health, statuses, ledger) over one shared context
 * (`github-repo-context.ts`). The methods are closures over that context: they need no `this` and
 * may be passed around unbound.
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
    ...contentsOf(ctx),
    ...branchesOf(ctx),
    ...stateRefOf(ctx),
    ...pullsOf(ctx),
    ...mergesOf(ctx),
    ...issuesOf(ctx),
    ...commentsOf(ctx),
    ...accessOf(ctx),
    ...checksOf(ctx),
    ...deploymentsOf(ctx),
    ...healthOf(ctx),
    ...statusesOf(ctx),
    ...ledgerOf(ctx),
  };
}
