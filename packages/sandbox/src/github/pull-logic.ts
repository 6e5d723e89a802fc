/**
 * Pull request semantics computed from git and metadata, as GitHub documents them:
 * mergeability (`clean`, `blocked`, `behind`, `dirty`, `unstable`, `draft`), the three merge
 * methods, the `sha` guard, branch protection (required checks, strict, approvals) and
 * native auto-merge.
 */
import { rivalPush } from "./emulator-act-as.js";
import { emitPull } from "./emulator-events.js";
import { onRefChanged, scheduleAutoMerge } from "./emulator-pull-effects.js";
import { requiredChecksFor, roleOf, rulesetsFor } from "./emulator-repos.js";
import { enqueue } from "./merge-queue.js";
import type { GitHubEmulator } from "./emulator.js";
import { ZERO_SHA } from "./git-store.js";
import { roleAtLeast, type Issue, type Repo } from "./model.js";
import { ApiError } from "./router.js";
import * as shape from "./shapes.js";

export interface PullView {
  body: ReturnType<typeof shape.pull>;
  baseSha: string;
  mergeableState: string;
  /** Why merging is refused right now (empty when it may merge). */
  blockers: string[];
}

type CheckState = "success" | "failure" | "pending" | "missing";

/** The state of one status context / check name on a commit; check runs win over statuses. */
export function contextState(repo: Repo, sha: string, context: string): CheckState {
  const runs = [...repo.checkRuns.values()].filter((r) => r.headSha === sha && r.name === context);
  const run = runs.at(-1);
  if (run) {
    if (run.status !== "completed") return "pending";
    return ["success", "neutral", "skipped"].includes(run.conclusion ?? "") ? "success" : "failure";
  }
  const status = repo.statuses.filter((s) => s.sha === sha && s.context === context).at(-1);
  if (status)
    return status.state === "success" ? "success" : status.state === "pending" ? "pending" : "failure";
  return "missing";
}

function allContexts(repo: Repo, sha: string): string[] {
  const names = new Set<string>();
  for (const run of repo.checkRuns.values()) if (run.headSha === sha) names.add(run.name);
  for (const status of repo.statuses) if (status.sha === sha) names.add(status.context);
  return [...names];
}

/** Approvals that count: the latest review of each user with write access. */
export function reviewVerdicts(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
): { approvals: number; changesRequested: boolean } {
  const latest = new Map<string, string>();
  for (const review of repo.reviews) {
    if (review.pullNumber !== issue.number || review.state === "COMMENTED" || review.state === "PENDING")
      continue;
    latest.set(review.user, review.state);
  }
  let approvals = 0;
  let changesRequested = false;
  for (const [login, state] of latest) {
    if (!roleAtLeast(roleOf(emu, repo, login), "write") && !emu.findAccount(login)?.login.endsWith("[bot]"))
      continue;
    if (state === "APPROVED") approvals++;
    if (state === "CHANGES_REQUESTED") changesRequested = true;
  }
  return { approvals, changesRequested };
}

export async function computePull(emu: GitHubEmulator, repo: Repo, issue: Issue): Promise<PullView> {
  const p = issue.pull!;
  const liveBase = await repo.git.readRef(`refs/heads/${p.baseRef}`);
  const baseSha =
    issue.state === "open"
      ? (liveBase ?? p.baseShaAtClose ?? ZERO_SHA)
      : (p.baseShaAtClose ?? liveBase ?? ZERO_SHA);
  let mergeable: boolean | null = null;
  let rebaseable: boolean | null = null;
  let mergeableState = "unknown";
  const blockers: string[] = [];
  if (issue.state === "open" && baseSha !== ZERO_SHA) {
    const outcome = await repo.git.mergeCommits(baseSha, p.headSha);
    if (!outcome.clean) {
      mergeable = false;
      rebaseable = false;
      mergeableState = "dirty";
      blockers.push("conflict");
    } else {
      mergeable = true;
      rebaseable = true;
      const protection = repo.protections.get(p.baseRef);
      let unstable = false;
      // Rulesets' `required_status_checks` count as classic protection's do.
      const required = requiredChecksFor(repo, p.baseRef);
      for (const context of required) {
        const state = contextState(repo, p.headSha, context);
        if (state === "missing" || state === "pending")
          blockers.push(`Required status check "${context}" is expected.`);
        if (state === "failure") blockers.push(`Required status check "${context}" is failing.`);
      }
      for (const context of allContexts(repo, p.headSha)) {
        if (required.includes(context)) continue;
        if (contextState(repo, p.headSha, context) !== "success") unstable = true;
      }
      if (protection && protection.requiredApprovals > 0) {
        const verdict = reviewVerdicts(emu, repo, issue);
        if (verdict.changesRequested) blockers.push("Changes requested by a reviewer with write access.");
        else if (verdict.approvals < protection.requiredApprovals) {
          blockers.push(
            `At least ${protection.requiredApprovals} approving review${protection.requiredApprovals === 1 ? " is" : "s are"} required by reviewers with write access.`,
          );
        }
      }
      // Strict required checks, from classic protection or a ruleset's
      // `strict_required_status_checks_policy`: the head must contain the base's tip.
      const strict =
        protection?.strict === true || rulesetsFor(repo, p.baseRef).some((ruleset) => ruleset.strict);
      const behind = strict && !(await repo.git.isAncestor(baseSha, p.headSha));
      if (p.draft) mergeableState = "draft";
      else if (blockers.length > 0) mergeableState = "blocked";
      else if (behind) {
        mergeableState = "behind";
        // GitHub's words for a head behind a strict base (REST 405, and GraphQL mergePullRequest).
        blockers.push("Head branch is out of date. Review and try the merge again.");
      } else if (unstable) mergeableState = "unstable";
      else mergeableState = "clean";
      if (p.draft) blockers.push("Pull request is still a draft.");
    }
  }
  let commits = 0;
  let additions = 0;
  let deletions = 0;
  let changedFiles = 0;
  if (baseSha !== ZERO_SHA) {
    const mergeBase = await repo.git.mergeBase(baseSha, p.headSha);
    if (mergeBase) {
      commits = (await repo.git.commitsBetween(mergeBase, p.headSha)).length;
      const files = await repo.git.changedFiles(mergeBase, p.headSha);
      changedFiles = files.length;
      additions = files.reduce((sum, f) => sum + f.additions, 0);
      deletions = files.reduce((sum, f) => sum + f.deletions, 0);
    }
  }
  const body = shape.pull(emu.shapes, repo, issue, {
    mergeable,
    rebaseable,
    mergeableState,
    commits,
    additions,
    deletions,
    changedFiles,
    baseSha,
  });
  return { body, baseSha, mergeableState, blockers };
}

/**
 * Whether this request still finds the PR's mergeability being computed (and uses one of the
 * requests `Repo.mergeabilityLag` grants): GitHub then answers `mergeable: null`.
 */
export function mergeabilityComputing(issue: Issue): boolean {
  const p = issue.pull!;
  if (issue.state !== "open" || (p.mergeabilityUnknownFor ?? 0) <= 0) return false;
  p.mergeabilityUnknownFor = p.mergeabilityUnknownFor! - 1;
  return true;
}

export type MergeMethod = "merge" | "squash" | "rebase";

export interface MergeRequest {
  method: MergeMethod;
  sha?: string;
  commitTitle?: string;
  commitMessage?: string;
  /** Who merges (a user or an app bot). */
  login: string;
  /** The merge queue itself lands the PR (a merge group that passed its checks). */
  viaQueue?: boolean;
}

/** Merges like `PUT /pulls/{n}/merge`; returns the new base tip. Throws GitHub's 405/409 errors. */
export async function mergePull(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  request: MergeRequest,
): Promise<string> {
  const key = `${repo.owner}/${repo.name}`;
  const previous = emu.mergeLocks.get(key) ?? Promise.resolve();
  const run = previous.catch(() => undefined).then(() => mergeNow(emu, repo, issue, request));
  emu.mergeLocks.set(
    key,
    run.catch(() => undefined),
  );
  return run;
}

async function mergeNow(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  request: MergeRequest,
): Promise<string> {
  const p = issue.pull!;
  if (issue.state !== "open" || p.merged) throw new ApiError(405, "Pull Request is not mergeable");
  if (request.sha !== undefined && request.sha !== p.headSha) {
    throw new ApiError(409, "Head branch was modified. Review and try the merge again.");
  }
  const allowed = {
    merge: repo.allowMergeCommit,
    squash: repo.allowSquashMerge,
    rebase: repo.allowRebaseMerge,
  }[request.method];
  if (!allowed) {
    const names = { merge: "Merge commits", squash: "Squash merges", rebase: "Rebase merges" };
    throw new ApiError(405, `${names[request.method]} are not allowed on this repository.`);
  }
  // A base with a merge queue takes PRs only through the queue
  // (https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch, rule type `merge_queue`).
  if (!request.viaQueue && rulesetsFor(repo, p.baseRef).some((ruleset) => ruleset.mergeQueue))
    throw new ApiError(405, "Changes must be made through the merge queue");
  // While mergeability is computed, GitHub refuses the merge as it would an unmergeable PR.
  if (mergeabilityComputing(issue)) throw new ApiError(405, "Pull Request is not mergeable");
  const view = await computePull(emu, repo, issue);
  if (view.mergeableState === "dirty") throw new ApiError(405, "Pull Request is not mergeable");
  if (view.blockers.length > 0) {
    const protection = repo.protections.get(p.baseRef);
    const bypass =
      protection !== undefined && !protection.enforceAdmins && roleOf(emu, repo, request.login) === "admin";
    if (!bypass)
      throw new ApiError(
        405,
        view.blockers.length === 1
          ? view.blockers[0]!
          : `Repository rule violations found\n\n${view.blockers.join("\n")}`,
      );
  }
  const git = repo.git;
  const baseSha = view.baseSha;
  const merger = emu.identityOf(request.login);
  // Web merges are committed by GitHub itself, authored by the person merging.
  const committer = { name: "GitHub", email: "noreply@github.com", date: merger.date };
  const headCommit = await git.readCommit(p.headSha);
  let newSha: string;
  if (request.method === "rebase") {
    let tip = baseSha;
    for (const sha of await git.commitsBetween(baseSha, p.headSha)) {
      const original = await git.readCommit(sha);
      if (original.parents.length > 1) throw new ApiError(405, "This branch can't be rebased");
      const applied = await git.cherryPickTree(original, tip);
      if (!applied.clean) throw new ApiError(405, "This branch can't be rebased");
      tip = await git.commitTree({
        tree: applied.tree,
        parents: [tip],
        message: original.message,
        author: original.author,
        committer,
      });
    }
    newSha = tip;
  } else {
    const merged = await git.mergeCommits(baseSha, p.headSha);
    if (!merged.clean) throw new ApiError(405, "Pull Request is not mergeable");
    if (request.method === "squash") {
      const messages: string[] = [];
      for (const sha of await git.commitsBetween(baseSha, p.headSha))
        messages.push(`* ${(await git.readCommit(sha)).message.trim()}`);
      const title = request.commitTitle ?? `${issue.title} (#${issue.number})`;
      const message = request.commitMessage ?? messages.join("\n\n");
      newSha = await git.commitTree({
        tree: merged.tree,
        parents: [baseSha],
        message: `${title}\n\n${message}\n`,
        author: merger,
        committer,
      });
    } else {
      const title =
        request.commitTitle ??
        `Merge pull request #${issue.number} from ${(p.headRepo ?? repo).owner}/${p.headRef}`;
      const message = request.commitMessage ?? issue.title;
      newSha = await git.commitTree({
        tree: merged.tree,
        parents: [baseSha, headCommit.sha],
        message: `${title}\n\n${message}\n`,
        author: merger,
        committer,
      });
    }
  }
  if (emu.faults.takeRefRace(`heads/${p.baseRef}`)) await rivalPush(emu, repo, `refs/heads/${p.baseRef}`);
  const swapped = await git.compareAndSwapRef(`refs/heads/${p.baseRef}`, newSha, baseSha);
  if (!swapped) throw new ApiError(405, "Base branch was modified. Review and try the merge again.");
  await markMerged(emu, repo, issue, request.login, baseSha, newSha);
  return newSha;
}

/** What follows a PR's merge commit landing on its base: the PR closes as merged, events, head deleted. */
export async function markMerged(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  login: string,
  baseSha: string,
  newSha: string,
): Promise<void> {
  const p = issue.pull!;
  const git = repo.git;
  const request = { login };
  const now = emu.now();
  issue.state = "closed";
  issue.closedAt = now;
  issue.updatedAt = now;
  issue.closedBy = request.login;
  p.merged = true;
  p.mergedAt = now;
  p.mergedBy = request.login;
  p.mergeCommitSha = newSha;
  p.baseShaAtClose = newSha;
  p.autoMerge = null;
  await onRefChanged(emu, repo, `refs/heads/${p.baseRef}`, baseSha, newSha, request.login);
  await emitPull(emu, repo, issue, "closed", request.login);
  // A fork's branch is its owner's: GitHub deletes only head branches of the base repository.
  if (repo.deleteBranchOnMerge && !p.headRepo) {
    const headRef = `refs/heads/${p.headRef}`;
    const current = await git.readRef(headRef);
    const stillUsed = [...repo.issues.values()].some(
      (i) => i.state === "open" && i.pull && (i.pull.baseRef === p.headRef || i.pull.headRef === p.headRef),
    );
    if (current && !stillUsed && (await git.deleteRef(headRef, current))) {
      await onRefChanged(emu, repo, headRef, current, ZERO_SHA, request.login);
    }
  }
}

/** Merges every open PR with auto-merge enabled whose requirements are now met. */
export async function evaluateAutoMerge(emu: GitHubEmulator, repo: Repo): Promise<void> {
  for (const issue of [...repo.issues.values()]) {
    const auto = issue.pull?.autoMerge;
    if (issue.state !== "open" || !auto || auto.stalled) continue;
    const view = await computePull(emu, repo, issue);
    if (view.mergeableState !== "clean" && view.mergeableState !== "unstable") continue;
    // With a merge queue, auto-merge adds the PR to the queue once it is ready.
    if (rulesetsFor(repo, issue.pull!.baseRef).some((ruleset) => ruleset.mergeQueue)) {
      issue.pull!.autoMerge = null;
      await enqueue(emu, repo, issue, auto.enabledBy);
      continue;
    }
    try {
      await mergePull(emu, repo, issue, {
        method: auto.method.toLowerCase() as MergeMethod,
        login: auto.enabledBy,
        ...(auto.commitTitle ? { commitTitle: auto.commitTitle } : {}),
        ...(auto.commitMessage ? { commitMessage: auto.commitMessage } : {}),
      });
    } catch (error) {
      // A lost race (base moved) is retried by the next event, as on GitHub.
      if (!(error instanceof ApiError)) throw error;
    }
  }
}

/** GraphQL `enablePullRequestAutoMerge` rules. Returns an error message, or undefined when enabled. */
export async function enableAutoMerge(
  emu: GitHubEmulator,
  repo: Repo,
  issue: Issue,
  login: string,
  method: "MERGE" | "SQUASH" | "REBASE",
  commitTitle?: string,
  commitMessage?: string,
  expectedHeadOid?: string,
): Promise<string | undefined> {
  const p = issue.pull!;
  if (!repo.allowAutoMerge) return "Auto merge is not allowed for this repository";
  // A method the repository does not allow is refused with GitHub's words (reported in
  // https://github.com/tokuhirom/mutsu/pull/5583 and https://github.com/hashicorp/homebrew-tap/pull/372).
  const allowed = {
    MERGE: repo.allowMergeCommit,
    SQUASH: repo.allowSquashMerge,
    REBASE: repo.allowRebaseMerge,
  };
  if (!allowed[method]) {
    const names = { MERGE: "merge commits are", SQUASH: "squash merging is", REBASE: "rebase merging is" };
    return `Merge method ${names[method]} not allowed on this repository`;
  }
  if (issue.state !== "open") return "Pull request is closed";
  // `expectedHeadOid`, "The expected head OID of the pull request" (GitHub's GraphQL schema), is
  // checked when auto-merge is enabled, with the answer GitHub gives a merge whose expected head
  // moved. Whether GitHub checks it again when it merges later is not documented, so the emulator
  // does not: a push by someone with write access leaves auto-merge armed, as GitHub's auto-merge
  // documentation says ("disabled if someone without write permissions pushes").
  if (expectedHeadOid !== undefined && expectedHeadOid !== p.headSha)
    return "Head branch was modified. Review and try the merge again.";
  const protection = repo.protections.get(p.baseRef);
  if (requiredChecksFor(repo, p.baseRef).length === 0 && (protection?.requiredApprovals ?? 0) === 0) {
    return "Pull request Protected branch rules not configured for this branch";
  }
  // Unknown mergeability is refused in the words GitHub uses for it (reported in
  // https://github.com/peter-evans/enable-pull-request-automerge/issues/355).
  if (mergeabilityComputing(issue)) return "Pull request Pull request is in unstable status";
  const view = await computePull(emu, repo, issue);
  const queued = rulesetsFor(repo, p.baseRef).some((ruleset) => ruleset.mergeQueue);
  // On a base with a merge queue, GitHub arms a PR whose checks have already passed but queues an
  // armed PR only on a later change (a push, a review, a check turning green), so it sits armed
  // and never queued (https://github.com/ClickHouse/ClickHouse/pull/98574,
  // https://github.com/osac-project/osac/pull/924): `stalled` until auto-merge is enabled anew.
  const stalled = queued && view.mergeableState === "clean";
  if (view.mergeableState === "clean" && !stalled) return "Pull request Pull request is in clean status";
  if (view.mergeableState === "dirty") return "Pull request Pull request is in dirty status";
  // A red or pending optional check (`unstable`) is refused too
  // (https://github.com/fastify/github-action-merge-dependabot/issues/561).
  if (view.mergeableState === "unstable") return "Pull request Pull request is in unstable status";
  p.autoMerge = {
    enabledBy: login,
    method,
    commitTitle: commitTitle ?? null,
    commitMessage: commitMessage ?? null,
    ...(stalled ? { stalled } : {}),
  };
  issue.updatedAt = emu.now();
  await emitPull(emu, repo, issue, "auto_merge_enabled", login, { reason: "" });
  scheduleAutoMerge(emu, repo);
  return undefined;
}
