import { mergeFerryPullAt } from "../../app/merge-ferry-pull.js";
import { parseUnitBranch } from "../../core/pr/branch.js";
import type { HandlerEvent, HandlerServices, RepositoryPayload } from "./services.js";

/**
 * Events after which a Ferry PR may merge although none of its checks changed
 * (docs/reliability.md rows 71 and 73): an approval (`pull_request_review` submitted, approved)
 * when the base requires reviews and the repository has auto-merge off, and a merge queue
 * dropping the PR (`pull_request` dequeued), which is re-added a bounded number of times.
 */

interface PullPayload extends RepositoryPayload {
  action: string;
  pull_request: {
    number: number;
    head: { ref: string; sha: string };
    user?: { login: string } | null;
  };
}

interface ReviewPayload extends PullPayload {
  review: { state: string };
}

interface DequeuedPayload extends PullPayload {
  reason?: string;
}

/** How many times one head is put back into a merge queue that dropped it. */
export const MAX_REQUEUES = 3;
/** Heads whose re-queues are counted, per process (the oldest is forgotten first). */
const MAX_COUNTED_HEADS = 1000;
/** Removals Ferry must not undo: a person took it out, or it merged. */
const FINAL_REASONS = new Set(["MANUAL", "MERGE", "ALREADY_MERGED"]);

const requeues = new WeakMap<HandlerServices, Map<string, number>>();

/** The branch of a PR Ferry opened on its own branch (any unit's), else undefined. */
function ferryBranch(payload: PullPayload, appLogin: string | undefined): string | undefined {
  const pull = payload.pull_request;
  if (appLogin === undefined || pull.user?.login !== appLogin) return undefined;
  return parseUnitBranch(pull.head.ref) ? pull.head.ref : undefined;
}

/** pull_request_review submitted with an approval: the approval may be what the merge waited for. */
export async function onPullRequestReview(
  event: HandlerEvent<ReviewPayload>,
  services: HandlerServices,
): Promise<void> {
  const { payload } = event;
  if (payload.action !== "submitted" || payload.review.state.toLowerCase() !== "approved") return;
  const owner = payload.repository.owner.login;
  const repo = payload.repository.name;
  const deps = services.depsFor(event.octokit, owner, repo);
  const branch = ferryBranch(payload, deps.appLogin);
  if (branch === undefined) return;
  const sha = payload.pull_request.head.sha;
  services.queue.enqueue(`checks:${owner}/${repo}@${sha}`, () =>
    mergeFerryPullAt(
      services.depsFor(event.octokit, owner, repo),
      branch,
      sha,
      payload.repository.default_branch,
    ),
  );
}

/** pull_request dequeued: the merge queue dropped Ferry's PR (a failed merge group, say); it is re-added. */
export async function onPullRequestDequeued(
  event: HandlerEvent<DequeuedPayload>,
  services: HandlerServices,
): Promise<void> {
  const { payload } = event;
  if (payload.action !== "dequeued" || FINAL_REASONS.has(payload.reason ?? "")) return;
  const owner = payload.repository.owner.login;
  const repo = payload.repository.name;
  const deps = services.depsFor(event.octokit, owner, repo);
  const branch = ferryBranch(payload, deps.appLogin);
  if (branch === undefined) return;
  const pull = payload.pull_request;
  const counts = requeues.get(services) ?? new Map<string, number>();
  requeues.set(services, counts);
  const key = `${owner}/${repo}#${pull.number}@${pull.head.sha}`;
  const count = (counts.get(key) ?? 0) + 1;
  counts.delete(key);
  counts.set(key, count);
  if (counts.size > MAX_COUNTED_HEADS) counts.delete(counts.keys().next().value!);
  if (count > MAX_REQUEUES) {
    if (count === MAX_REQUEUES + 1)
      services.queue.enqueue(`dequeued:${key}`, () =>
        services
          .depsFor(event.octokit, owner, repo)
          .github.comment(
            pull.number,
            `The merge queue removed this pull request ${count} times (last reason: ${payload.reason ?? "unknown"}); Ferry stops adding this commit again. Fix the cause, then add it to the queue by hand.`,
          ),
      );
    return;
  }
  services.queue.enqueue(`checks:${owner}/${repo}@${pull.head.sha}`, () =>
    mergeFerryPullAt(
      services.depsFor(event.octokit, owner, repo),
      branch,
      pull.head.sha,
      payload.repository.default_branch,
    ),
  );
}
