/**
 * What follows a change on a pull request's branch or checks in the GitHub emulator: synchronize
 * and close on ref moves, simulated CI, check suites kept in step with their runs, auto-merge.
 */
import { emit, emitPull, hasSubscribers } from "./emulator-events.js";
import type { GitHubEmulator } from "./emulator.js";
import { emitPush } from "./emulator-events.js";
import { ZERO_SHA } from "./git-store.js";
import { leaveQueueOnPush } from "./merge-queue.js";
import { dismissStaleApprovals } from "./stale-reviews.js";
import type { CheckRun, CheckSuite, Issue, Repo } from "./model.js";
import { evaluateAutoMerge } from "./pull-logic.js";
import * as shape from "./shapes.js";

/**
 * Everything that follows a branch moving, wherever it moved (API, merge, git push):
 * open PRs on it get the new head (synchronize), a push event goes out, simulated CI starts,
 * and auto-merge is reconsidered.
 */
export async function onRefChanged(
  emu: GitHubEmulator,
  repo: Repo,
  ref: string,
  before: string,
  after: string,
  pusher: string,
  options: { forced?: boolean } = {},
): Promise<void> {
  repo.pushedAt = emu.now();
  if (options.forced) emu.forcedRefUpdates.push({ repo: `${repo.owner}/${repo.name}`, ref });
  const branch = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : undefined;
  await emitPush(emu, repo, ref, before, after, pusher, options.forced ?? false);
  if (branch) {
    for (const issue of repo.issues.values()) {
      // A moved base sends every open PR on it back to the background mergeability job
      // (`mergeable: null` "when another commit is merged into the base branch",
      // https://github.com/cirrus-actions/rebase/issues/57).
      if (issue.pull && issue.state === "open" && issue.pull.baseRef === branch)
        issue.pull.mergeabilityUnknownFor = repo.mergeabilityLag;
    }
    // The PRs whose head is this branch: in this repository, and, for a fork, in the repositories
    // it was forked from (GitHub's network), which copy the new head as refs/pull/<n>/head.
    for (const issue of repo.issues.values()) {
      const p = issue.pull;
      if (p && issue.state === "open" && p.headRef === branch && !p.headRepo)
        await movePullHead(emu, repo, issue, after, pusher);
    }
    for (let upstream = repo.parent; upstream; upstream = upstream.parent) {
      for (const issue of upstream.issues.values()) {
        const p = issue.pull;
        if (!p || issue.state !== "open" || p.headRef !== branch || p.headRepo !== repo) continue;
        if (after !== ZERO_SHA)
          await upstream.git.fetchFrom(repo.git, `+${after}:refs/pull/${issue.number}/head`);
        await movePullHead(emu, upstream, issue, after, pusher);
      }
      scheduleAutoMerge(emu, upstream);
    }
  }
  scheduleAutoMerge(emu, repo);
}

/** An open PR of `repo` whose head branch moved to `after` (closed when the branch was deleted). */
async function movePullHead(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  after: string,
  pusher: string,
): Promise<void> {
  const p = issue.pull!;
  if (after === ZERO_SHA) {
    // GitHub closes a pull request whose head branch is deleted.
    const baseSha = await repo.git.readRef(`refs/heads/${p.baseRef}`);
    p.baseShaAtClose = baseSha ?? null;
    issue.state = "closed";
    issue.closedAt = emu.now();
    issue.updatedAt = issue.closedAt;
    p.autoMerge = null;
    await emitPull(emu, repo, issue, "closed", pusher);
    return;
  }
  const previous = p.headSha;
  p.headSha = after;
  p.mergeabilityUnknownFor = repo.mergeabilityLag;
  await leaveQueueOnPush(repo, issue, previous);
  await dismissStaleApprovals(emu, repo, issue, pusher);
  issue.updatedAt = emu.now();
  // GitHub turns auto-merge off when someone without write access pushes; Ferry's bot has it, so keep it.
  await emitPull(emu, repo, issue, "synchronize", pusher, { before: previous, after });
  startCi(emu, repo, issue);
}

export function scheduleAutoMerge(emu: GitHubEmulator, repo: Repo): void {
  const pending = [...repo.issues.values()].some((i) => i.state === "open" && i.pull?.autoMerge);
  if (pending) emu.later(() => evaluateAutoMerge(emu, repo));
}

/** Ensures the check suite of `appId` on `sha` exists. */
export function checkSuiteFor(
  emu: GitHubEmulator,
  repo: Repo,
  appId: number,
  sha: string,
  headBranch: string | null,
): CheckSuite {
  for (const suite of repo.checkSuites.values()) {
    if (suite.appId === appId && suite.headSha === sha) return suite;
  }
  const id = emu.id();
  const suite: CheckSuite = {
    id,
    nodeId: shape.nodeIdFor("CS", id),
    appId,
    headSha: sha,
    headBranch,
    status: "queued",
    conclusion: null,
    createdAt: emu.now(),
    updatedAt: emu.now(),
  };
  repo.checkSuites.set(id, suite);
  return suite;
}

/** Keeps a suite's status/conclusion in step with its runs; returns true when it just completed. */
export function refreshSuite(emu: GitHubEmulator, repo: Repo, suite: CheckSuite): boolean {
  const runs = [...repo.checkRuns.values()].filter((r) => r.suiteId === suite.id);
  const wasCompleted = suite.status === "completed";
  if (runs.length === 0) return false;
  if (runs.every((r) => r.status === "completed")) {
    suite.status = "completed";
    const order = [
      "action_required",
      "cancelled",
      "timed_out",
      "failure",
      "neutral",
      "skipped",
      "stale",
      "success",
    ];
    const conclusions = runs.map((r) => r.conclusion ?? "neutral");
    suite.conclusion = order.find((c) => conclusions.includes(c)) ?? "success";
  } else {
    suite.status = "in_progress";
    suite.conclusion = null;
  }
  suite.updatedAt = emu.now();
  return !wasCompleted && suite.status === "completed";
}

export function pullsForSha(emu: GitHubEmulator, repo: Repo, sha: string): unknown[] {
  const result: unknown[] = [];
  for (const issue of repo.issues.values()) {
    const p = issue.pull;
    if (!p || issue.state !== "open" || p.headSha !== sha) continue;
    const base = `${emu.apiUrl}/repos/${repo.owner}/${repo.name}`;
    result.push({
      id: issue.pullId,
      number: issue.number,
      url: `${base}/pulls/${issue.number}`,
      head: {
        ref: p.headRef,
        sha: p.headSha,
        repo: {
          id: (p.headRepo ?? repo).id,
          url: `${emu.apiUrl}/repos/${(p.headRepo ?? repo).owner}/${(p.headRepo ?? repo).name}`,
          name: (p.headRepo ?? repo).name,
        },
      },
      base: { ref: p.baseRef, sha: p.headSha, repo: { id: repo.id, url: base, name: repo.name } },
    });
  }
  return result;
}

/** Emits check_run (and check_suite when the suite completes) for a run's change. */
export async function emitCheckRun(
  emu: GitHubEmulator,
  repo: Repo,
  run: CheckRun,
  action: string,
  sender: string,
): Promise<void> {
  const suite = repo.checkSuites.get(run.suiteId)!;
  const completed = refreshSuite(emu, repo, suite);
  if (run.status === "completed") scheduleAutoMerge(emu, repo);
  if (!hasSubscribers(emu, repo, "check_run") && !hasSubscribers(emu, repo, "check_suite")) return;
  const pulls = pullsForSha(emu, repo, run.headSha);
  const runShape = {
    ...shape.checkRun(emu.shapes, repo, run, pulls),
    check_suite: await suiteShape(emu, repo, suite),
  };
  emit(emu, repo, "check_run", { action, check_run: runShape }, sender);
  if (completed)
    emit(
      emu,
      repo,
      "check_suite",
      { action: "completed", check_suite: await suiteShape(emu, repo, suite) },
      sender,
    );
}

export async function suiteShape(emu: GitHubEmulator, repo: Repo, suite: CheckSuite) {
  const runs = [...repo.checkRuns.values()].filter((r) => r.suiteId === suite.id);
  const headCommit = await repo.git.readCommit(suite.headSha);
  return shape.checkSuite(
    emu.shapes,
    repo,
    suite,
    pullsForSha(emu, repo, suite.headSha),
    runs.length,
    headCommit,
  );
}

/** Simulated CI: a check run per configured context on the PR's head, completed after its delay. */
export function startCi(emu: GitHubEmulator, repo: Repo, issue: Issue): void {
  const p = issue.pull;
  if (!p) return;
  runSimulatedCi(emu, repo, p.headSha, p.headRef, { announce: true });
}

/**
 * The repository's simulated CI on `sha` (a PR head, or a merge queue's group): one check run per
 * configured context, completed after its delay; `announce` also sends the `created` event.
 */
export function runSimulatedCi(
  emu: GitHubEmulator,
  repo: Repo,
  sha: string,
  branch: string,
  options: { announce?: boolean; conclusion?: string } = {},
): void {
  const bot = emu.appById(emu.actionsAppId).botLogin;
  for (const ci of repo.ci) {
    const run = addActionsCheckRun(emu, repo, { sha, branch, name: ci.context });
    if (options.announce) emu.later(() => emitCheckRun(emu, repo, run, "created", bot));
    emu.later(async () => {
      run.status = "completed";
      run.conclusion = options.conclusion ?? ci.conclusion;
      run.completedAt = emu.now();
      await emitCheckRun(emu, repo, run, "completed", bot);
    }, ci.delayMs);
  }
}

/** A GitHub Actions check run on `sha`, in its suite: in progress, or completed with `conclusion`. */
export function addActionsCheckRun(
  emu: GitHubEmulator,
  repo: Repo,
  input: { sha: string; branch: string; name: string; conclusion?: string },
): CheckRun {
  const suite = checkSuiteFor(emu, repo, emu.actionsAppId, input.sha, input.branch);
  const id = emu.id();
  const completed = input.conclusion !== undefined;
  const run: CheckRun = {
    id,
    nodeId: shape.nodeIdFor("CR", id),
    suiteId: suite.id,
    appId: emu.actionsAppId,
    name: input.name,
    headSha: input.sha,
    status: completed ? "completed" : "in_progress",
    conclusion: input.conclusion ?? null,
    startedAt: emu.now(),
    completedAt: completed ? emu.now() : null,
    externalId: "",
    detailsUrl: `${emu.webUrl}/${repo.owner}/${repo.name}/actions/runs/${id}`,
    output: { title: null, summary: null, text: null, annotations: [] },
  };
  repo.checkRuns.set(id, run);
  return run;
}
