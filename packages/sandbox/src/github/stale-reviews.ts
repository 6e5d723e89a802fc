/**
 * Branch protection's "Dismiss stale pull request approvals when new commits are pushed"
 * (`required_pull_request_reviews.dismiss_stale_reviews`,
 * https://docs.github.com/en/rest/branches/branch-protection#update-branch-protection): a push to
 * a PR's head turns its approvals into `DISMISSED` reviews, which no longer count. Off (GitHub's
 * default), approvals given to older content keep counting.
 */
import type { Issue, Repo } from "./model.js";

export function dismissStaleApprovals(repo: Repo, issue: Issue): void {
  if (!repo.protections.get(issue.pull!.baseRef)?.dismissStaleReviews) return;
  for (const review of repo.reviews)
    if (review.pullNumber === issue.number && review.state === "APPROVED") review.state = "DISMISSED";
}
