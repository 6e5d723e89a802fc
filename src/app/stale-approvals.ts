import type { AppDeps } from "./app-deps.js";
import type { GitHubComments, GitHubPulls } from "./github-port.js";

/**
 * After Ferry rewrote a `merge: review` PR (docs/reliability.md row 74): approvals given to the
 * content it replaced still count unless the base's protection dismisses stale approvals (GitHub's
 * default does not). Ferry does not dismiss them itself (a person's review is theirs to withdraw,
 * and a protected branch may restrict who can dismiss); it says so on the PR, once per rewrite,
 * so the approver can look again. Nothing is said when the repository dismissed them.
 */
export async function warnOfStaleApprovals(
  deps: AppDeps<GitHubPulls & GitHubComments>,
  pull: number,
  head: string,
): Promise<boolean> {
  const reviews = (await deps.github.listReviews?.(pull)) ?? [];
  const stale = reviews.filter((review) => review.state === "APPROVED" && review.commitId !== head).length;
  if (stale === 0) return false;
  await deps.github.comment(
    pull,
    `Ferry rewrote this pull request (now ${head.slice(0, 7)}): ${stale === 1 ? "an approval" : `${stale} approvals`} given to its earlier content still ${stale === 1 ? "counts" : "count"}, because this repository does not dismiss stale approvals. Review the new content before merging, or turn on "Dismiss stale pull request approvals when new commits are pushed" for the base branch.`,
  );
  return true;
}
