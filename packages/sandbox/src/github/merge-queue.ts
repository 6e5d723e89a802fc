/**
 * A merge queue on a base branch (ruleset rule `merge_queue`,
 * https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch). A PR enters it through
 * GraphQL `enqueuePullRequest` or native auto-merge; the queue builds a merge group, the PR's
 * changes on the current base, on a `gh-readonly-queue/<base>/pr-<n>-<head>` branch, runs the
 * simulated CI there ("A merge queue may use GitHub Actions or your own CI provider to run
 * required checks", GitHub's merge queue documentation) and, once the base's required checks
 * have all reported and passed on the group (an app's check, posted on `merge_group`, is waited
 * for), moves the base to it and closes the PR as merged. A failing check, a base
 * that moved meanwhile, or a push to the PR's head drops the PR from the queue; it stays open.
 * Entering and leaving the queue send `pull_request` `enqueued` and `dequeued` (with GitHub's
 * `reason`, e.g. `CI_FAILURE`; the webhook schemas in @octokit/openapi-webhooks-types).
 */
import { emit, emitPull } from "./emulator-events.js";
import { runSimulatedCi } from "./emulator-pull-effects.js";
import { requiredChecksFor, rulesetsFor } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import { ZERO_SHA } from "./git-store.js";
import type { Issue, Repo } from "./model.js";
import { computePull, contextState, markMerged } from "./pull-logic.js";

/** Adds an open, mergeable PR to its base's queue. Returns GitHub's refusal, or undefined when queued. */
export async function enqueue(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  login: string,
  expectedHeadOid?: string,
): Promise<string | undefined> {
  const p = issue.pull!;
  const queue = rulesetsFor(repo, p.baseRef).find((ruleset) => ruleset.mergeQueue)?.mergeQueue;
  // The refusals' wording is the emulator's where GitHub's answers are not documented.
  if (!queue) return "Pull request is not in a mergeable state: the base branch has no merge queue";
  if (issue.state !== "open") return "Pull request is closed";
  // GitHub's UNPROCESSABLE answer to a second enqueue, as tools that enqueue meet it (e.g.
  // https://github.com/ClickHouse/ClickHouse/pull/109183).
  if (p.queuedGroup !== undefined) return "Pull request is already in the queue";
  if (expectedHeadOid !== undefined && expectedHeadOid !== p.headSha)
    return "Head branch was modified. Review and try the merge again.";
  // Taken before the first await, so an enqueue arriving while this one builds the group is refused.
  p.queuedGroup = BUILDING;
  try {
    return await addGroup(emu, repo, issue, login, queue.method);
  } finally {
    if (p.queuedGroup === BUILDING) delete p.queuedGroup;
  }
}

/** The PR's place in the queue while its merge group is being built. */
const BUILDING = "";

/** The branch a merge group lives on while it waits. */
function groupRef(baseRef: string, number: number, head: string): string {
  return `refs/heads/gh-readonly-queue/${baseRef}/pr-${number}-${head}`;
}

/**
 * GitHub removes a PR from the merge queue when its head changes: the group built from the old
 * head is deleted and never lands, and the PR may be queued again.
 */
export async function leaveQueueOnPush(repo: Repo, issue: Issue, oldHead: string): Promise<void> {
  const p = issue.pull!;
  if (p.queuedGroup) await repo.git.deleteRef(groupRef(p.baseRef, issue.number, oldHead), p.queuedGroup);
  delete p.queuedGroup;
}

/** Builds the merge group, runs the simulated CI on it and schedules its landing. */
async function addGroup(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  login: string,
  method: "MERGE" | "SQUASH" | "REBASE",
): Promise<string | undefined> {
  const p = issue.pull!;
  const head = p.headSha;
  const view = await computePull(emu, repo, issue);
  if (view.blockers.length > 0) return `Pull request is not mergeable: ${view.blockers[0]}`;
  const git = repo.git;
  const baseSha = view.baseSha;
  const merged = await git.mergeCommits(baseSha, p.headSha);
  if (!merged.clean) return "Pull request is not mergeable: conflict";
  const merger = emu.identityOf(login);
  const group = await git.commitTree({
    tree: merged.tree,
    parents: method === "MERGE" ? [baseSha, p.headSha] : [baseSha],
    message: `${issue.title} (#${issue.number})\n`,
    author: merger,
    committer: { name: "GitHub", email: "noreply@github.com", date: merger.date },
  });
  // A push while the group was built took the PR out of the queue (leaveQueueOnPush).
  if (p.headSha !== head || p.queuedGroup !== BUILDING)
    return "Head branch was modified. Review and try the merge again.";
  const ref = groupRef(p.baseRef, issue.number, head);
  await git.compareAndSwapRef(ref, group, ZERO_SHA);
  p.queuedGroup = group;
  // The simulated CI on the merge group's commit (the `merge_group` run).
  const failing = emu.faults.takeFailedMergeGroup();
  runSimulatedCi(emu, repo, group, ref.slice("refs/heads/".length), failing ? { conclusion: "failure" } : {});
  await emitPull(emu, repo, issue, "enqueued", login);
  // Apps that report required checks hear of the group as GitHub tells them: merge_group
  // checks_requested (https://docs.github.com/en/webhooks/webhook-events-and-payloads#merge_group).
  emit(
    emu,
    repo,
    "merge_group",
    {
      action: "checks_requested",
      merge_group: {
        head_sha: group,
        head_ref: ref,
        base_sha: baseSha,
        base_ref: `refs/heads/${p.baseRef}`,
        head_commit: {
          id: group,
          tree_id: merged.tree,
          message: `${issue.title} (#${issue.number})\n`,
          timestamp: merger.date,
          author: { name: merger.name, email: merger.email },
          committer: { name: "GitHub", email: "noreply@github.com" },
        },
      },
    },
    login,
  );
  const delay = Math.max(0, ...repo.ci.map((ci) => ci.delayMs));
  const entry = { ref, group, baseSha, deadline: Date.now() + delay + CHECK_RESPONSE_MS };
  emu.later(() => land(emu, repo, issue, login, entry), delay + 1);
  return undefined;
}

/**
 * How long the queue waits for the group's required checks to report. GitHub waits the ruleset's
 * `check_response_timeout_minutes` (60) and then removes the PR (reason `CI_TIMEOUT`); the
 * emulator waits a minute of real time, so a check posted by an app (on `merge_group`) is
 * awaited as on GitHub and a check nobody reports still ends the entry.
 */
const CHECK_RESPONSE_MS = 60_000;
const CHECK_POLL_MS = 100;

/** Lands the group when the base's required checks passed on it; otherwise drops the PR from the queue. */
async function land(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  login: string,
  entry: { ref: string; group: string; baseSha: string; deadline: number },
): Promise<void> {
  const p = issue.pull!;
  const git = repo.git;
  const states = requiredChecksFor(repo, p.baseRef).map((context) =>
    contextState(repo, entry.group, context),
  );
  const waiting = !states.includes("failure") && states.some((state) => state !== "success");
  if (waiting && Date.now() < entry.deadline && issue.state === "open" && p.queuedGroup === entry.group) {
    emu.later(() => land(emu, repo, issue, login, entry), CHECK_POLL_MS);
    return;
  }
  const passed = states.every((state) => state === "success");
  const landed =
    passed &&
    issue.state === "open" &&
    p.queuedGroup === entry.group &&
    (await git.compareAndSwapRef(`refs/heads/${p.baseRef}`, entry.group, entry.baseSha));
  await git.deleteRef(entry.ref, entry.group);
  if (p.queuedGroup === entry.group) delete p.queuedGroup;
  if (landed) await markMerged(emu, repo, issue, login, entry.baseSha, entry.group);
  else if (issue.state === "open")
    await emitPull(emu, repo, issue, "dequeued", login, {
      reason: passed ? "UNKNOWN_REMOVAL_REASON" : waiting ? "CI_TIMEOUT" : "CI_FAILURE",
    });
}
