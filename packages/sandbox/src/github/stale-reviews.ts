/**
 * Branch protection's "Dismiss stale pull request approvals when new commits are pushed"
 * (`required_pull_request_reviews.dismiss_stale_reviews`,
 * https://docs.github.com/en/rest/branches/branch-protection#update-branch-protection): a push to
 * a PR's head turns its approvals into `DISMISSED` reviews, which no longer count, and each
 * dismissal sends `pull_request_review` with action `dismissed`
 * (https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request_review). Off
 * (GitHub's default), approvals given to older content keep counting.
 */
import { emit } from "./emulator-events.js";
import type { GitHubEmulator } from "./emulator.js";
import { ZERO_SHA } from "./git-store.js";
import type { Issue, Repo } from "./model.js";
import * as shape from "./shapes.js";

export async function dismissStaleApprovals(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  pusher: string,
): Promise<void> {
  if (!repo.protections.get(issue.pull!.baseRef)?.dismissStaleReviews) return;
  const dismissed = repo.reviews.filter(
    (review) => review.pullNumber === issue.number && review.state === "APPROVED",
  );
  if (dismissed.length === 0) return;
  const baseSha = (await repo.git.readRef(`refs/heads/${issue.pull!.baseRef}`)) ?? ZERO_SHA;
  for (const review of dismissed) {
    review.state = "DISMISSED";
    emit(
      emu,
      repo,
      "pull_request_review",
      {
        action: "dismissed",
        review: { ...shape.review(emu.shapes, repo, review), state: "dismissed" },
        pull_request: shape.pullSimple(emu.shapes, repo, issue, baseSha),
      },
      pusher,
    );
  }
}
