import { environmentPolicy } from "../core/policy/layered-policy.js";
import { isPullExistsRefusal, isUserError, TransientError, UserError } from "../core/errors.js";
import { isNewer } from "../core/policy/select-tag.js";
import { formatBody, type BodyRow } from "../core/pr/body.js";
import { inlineCode } from "../core/pr/markdown.js";
import { formatBranchName, formatLabels, parseBranchName, type UnitGroup } from "../core/pr/branch.js";
import type { PlanBlock, PlanKind } from "../core/pr/plan-block.js";
import { formatTitle } from "../core/pr/title.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type { BranchInfo, GitHubContents, PullRequestInfo } from "./github-port.js";
import { mergeMethodFor, mergeWhenReady, pauseBeforeRetry, type PullWork } from "./merge-when-ready.js";
import { currentImages, type EnvironmentPlan } from "./plan-environment.js";
import { writeBranch } from "./write-branch.js";
import { ferryPull, sealPlan } from "./pull-trust.js";
import { notifyPullOpened } from "./notifications.js";
import { repoFileSource } from "./repo-files.js";
import { warnOfStaleApprovals } from "./stale-approvals.js";
import { mayMergeNow } from "./window-gate.js";
import { pullReviewers } from "../core/rights/image-rights.js";
import { alreadyOnMovedBase, baseMovedUnder } from "./unit-base.js";

export interface UpsertInput {
  loaded: LoadedConfig;
  plan: EnvironmentPlan;
  /** The plan's unit (docs/config.md "Grouping"): its images only; absent for the environment's default unit. */
  group?: UnitGroup;
  kind: PlanKind;
  requestedBy?: string;
  /** Policy description and source range per image, for the body table. */
  rows: Record<string, BodyRow>;
  note?: string;
  /** The issue or PR the command came from (linked from the body). */
  requestedIn?: number;
  /**
   * Write even when the branch tip proposes newer tags: the guard replacing a commit Ferry did not
   * write. Otherwise a bump never moves `ferry/<env>` from a newer tag back to an older one.
   */
  replaceNewerTip?: boolean;
  /**
   * What a listing of the open PRs taken by this scan shows for the branch: with nothing to
   * change and no PR listed, no lookup is needed. A listed PR is always read again.
   */
  listed?: { pull: PullRequestInfo | undefined };
}

export type UpsertResult =
  | {
      action: "opened" | "updated" | "unchanged";
      pull: PullRequestInfo;
      /** Something the requester should know although the PR is there (reviewers GitHub refused). */
      notice?: string;
    }
  | { action: "closed"; pull: PullRequestInfo }
  /** Nothing to write; `pull` is the open PR of the environment, if any (a person's promotion, say). */
  | { action: "none"; pull?: PullRequestInfo };

/**
 * One PR per environment on `ferry/<env>`: opens it, or updates the open one with a new commit on
 * a branch built from the current base; closes it when its change is no longer wanted. Running it
 * twice with the same plan changes nothing the second time (docs/architecture.md "Writes are upserts").
 */
export async function upsertPromotionPr(
  deps: AppDeps<PullWork & GitHubContents>,
  input: UpsertInput,
): Promise<UpsertResult> {
  const { loaded, plan, kind } = input;
  const environment = plan.environment;
  const branch = formatBranchName(environment, input.group);
  const block = planBlock(input);
  const title = formatTitle(
    environment,
    block.changes.map((change) => ({ image: change.image, version: change.to.tag ?? change.to.digest })),
    kind === "rollback" ? "rollback" : "promote",
    input.group?.kind === "group" ? input.group.name : undefined,
  );
  const message = commitMessage(title, plan);
  // The body names the commit just written, under a seal: the only head Ferry will merge.
  const body = (head: string): string =>
    formatBody({
      plan: sealPlan(deps.sealKey, { ...block, head }),
      rows: input.rows,
      webUrl: deps.webUrl,
      fullTextUrl: `${deps.webUrl.replace(/\/+$/, "")}/${deps.github.owner}/${deps.github.repo}/commit/${head}`,
      ...(input.note ? { note: input.note } : {}),
      ...(input.requestedIn !== undefined ? { requestedIn: input.requestedIn } : {}),
    });

  // The tree of a commit written on the base before the branch turned out to exist.
  let planTree: string | undefined;
  if (plan.changes.length > 0 && kind !== "bump") {
    // A PR a person asked for usually starts a new branch. Creating the branch first saves the PR
    // lookup: GitHub closes a PR whose head branch is deleted, so a branch that did not exist has no
    // open PR (docs/architecture.md "Request budget"). When it exists, the usual path below takes over.
    const commit = await deps.github.createCommit({
      baseTreeSha: loaded.base.treeSha,
      parents: [loaded.base.sha],
      files: plan.files,
      message,
    });
    if ((await deps.github.createRef(branch, commit.sha)) === "created")
      return openPull(deps, input, branch, commit.sha, title, body(commit.sha));
    planTree = commit.treeSha;
  }

  const existing =
    plan.changes.length === 0 && input.listed && input.listed.pull === undefined
      ? undefined
      : await deps.github.findOpenPull(branch);
  const trusted = existing ? ferryPull(deps, existing) : undefined;
  if (existing && !trusted)
    // Someone else's PR from a branch named like Ferry's: never adopted, updated or merged.
    throw new UserError(
      "foreign-pull",
      `#${existing.number} comes from ${branch} but Ferry did not open it; close it so that Ferry can open its own`,
    );
  // A block that no longer verifies (edited body) is rewritten; a head Ferry did not write is replaced.
  const existingPlan = trusted?.block;

  if (plan.changes.length === 0) {
    // An automatic PR whose change is already on the base (merged by hand, or superseded) is
    // closed; PRs a person asked for (promote/rollback) are left to people.
    if (existing && kind === "bump" && existingPlan?.kind === "bump") {
      await deps.github.comment(
        existing.number,
        "Closing: the base branch already has this change, or it is no longer wanted.",
      );
      await deps.github.updatePull(existing.number, { state: "closed" });
      deps.log.info({ branch, pull: existing.number }, "pull request closed: nothing to change");
      return { action: "closed", pull: existing };
    }
    return existing ? { action: "none", pull: existing } : { action: "none" };
  }

  // A bump must not replace a PR a person asked for (a rollback or a promotion) with a newer tag.
  if (existing && existingPlan && kind === "bump" && existingPlan.kind !== "bump")
    return { action: "unchanged", pull: existing };
  if (existing && existingPlan && trusted?.headIsFerrys && sameChanges(existingPlan, block)) {
    // The base changed a file this PR edits since it was written (another unit's merge, a hand
    // edit, a PR written on a base just left behind): the PR is rebuilt on the base (row 77).
    const movedUnder = await baseMovedUnder(deps, loaded, existingPlan, plan.files);
    // The same change, but the base moved on and requires branches to be up to date: it would
    // never merge as it is, so the branch is rebuilt on the base (docs/reliability.md row 75).
    if (movedUnder)
      deps.log.info({ environment, pull: existing.number }, "base changed the pull request's files: rebuilt");
    else {
      if (existingPlan.base === loaded.base.sha || !(await upToDateRequired(deps, loaded, existing)))
        return { action: "unchanged", pull: existing };
      deps.log.info({ environment, pull: existing.number }, "pull request behind a strict base: rebuilt");
    }
  }
  // Replicas race: one that listed the tags before the newest push must not move another's PR
  // back to an older tag (docs/reliability.md row 22). The newer PR stays; the next sync re-plans.
  if (existing && existingPlan && kind === "bump" && existingPlan.kind === "bump") {
    const older = proposesNewer(loaded, block, (image) => {
      return existingPlan.changes.find((other) => other.image === image)?.to.tag;
    });
    if (older) {
      deps.log.info({ environment, pull: existing.number }, "pull request kept: it proposes a newer tag");
      return { action: "unchanged", pull: existing };
    }
  }

  // The same rule for the branch itself, judged on every compare-and-swap attempt: the PR body is
  // written after the branch, so a replica that has just moved the tip to a newer tag may not have
  // described it yet, and a write redone after losing the race must not undo the winner's newer tag.
  const judged = trusted?.headIsFerrys && existingPlan?.kind === "bump" ? existingPlan.head : undefined;
  const yieldTo =
    kind === "bump" && !input.replaceNewerTip
      ? (tip: BranchInfo) => tipProposesNewer(deps, loaded, block, tip, judged)
      : undefined;
  // An automatic change that merged while this sync waited is not proposed again (a person's
  // command is answered on the base it read: it asked for that change, and its budget has no room).
  if (kind === "bump" && (await alreadyOnMovedBase(deps, loaded, plan.files))) {
    deps.log.info(
      { environment, branch },
      "change already on the base, which moved meanwhile: nothing written",
    );
    return existing ? { action: "unchanged", pull: existing } : { action: "none" };
  }
  const head = await writeBranch(deps, loaded, {
    branch,
    plan,
    message,
    probablyNew: existing === undefined && kind === "bump",
    ...(planTree !== undefined ? { treeSha: planTree } : {}),
    ...(yieldTo ? { yieldTo } : {}),
    upToDateRequired: () => upToDateRequired(deps, loaded, existing),
  });
  if (head === undefined) {
    deps.log.info(
      { environment, ...(existing ? { pull: existing.number } : {}) },
      "branch kept: it already proposes a newer tag",
    );
    return existing ? { action: "unchanged", pull: existing } : { action: "none" };
  }
  if (!existing) return openPull(deps, input, branch, head, title, body(head));
  const text = body(head);
  await deps.github.updatePull(existing.number, { title, body: text });
  deps.log.info({ environment, pull: existing.number }, "pull request updated");
  deps.onPullRequest?.({ environment, number: existing.number, action: "updated" });
  const pull = { ...existing, title, body: text, headSha: head };
  if (loaded.config.environments[environment]?.merge === "review")
    await warnOfStaleApprovals(deps, existing.number, head);
  await afterWrite(deps, loaded, pull, head);
  return { action: "updated", pull };
}

/**
 * Whether the base requires branches to be up to date before merging: a ruleset's
 * `strict_required_status_checks_policy` (readable with metadata access), or, for classic
 * protection (whose `strict` needs the administration permission to read), GitHub calling the
 * open PR `behind`, which it does only then
 * (https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request, `mergeable_state`).
 */
async function upToDateRequired(
  deps: AppDeps<PullWork>,
  loaded: LoadedConfig,
  pull: PullRequestInfo | undefined,
): Promise<boolean> {
  if ((await deps.github.upToDateRequired?.(loaded.baseBranch)) === true) return true;
  if (!pull) return false;
  return (await deps.github.getPull(pull.number))?.mergeableState === "behind";
}

/** Whether `theirs` (image → tag) is newer than this block's target for any image the block changes. */
function proposesNewer(
  loaded: LoadedConfig,
  block: PlanBlock,
  theirs: (image: string) => string | undefined,
): boolean {
  return block.changes.some((change) => {
    const their = theirs(change.image);
    const ours = change.to.tag;
    if (their === undefined || ours === undefined) return false;
    return isNewer(their, ours, environmentPolicy(loaded.config, block.environment, change.image)) === true;
  });
}

/**
 * Whether the branch tip already proposes a newer tag than `block` for one of its images, read
 * from the tip's files. A tip that is the base, or the head the open PR's sealed plan names
 * (`judged`: compared already), costs no read.
 */
async function tipProposesNewer(
  deps: AppDeps<GitHubContents>,
  loaded: LoadedConfig,
  block: PlanBlock,
  tip: BranchInfo,
  judged: string | undefined,
): Promise<boolean> {
  if (tip.sha === loaded.base.sha || tip.sha === judged) return false;
  let running: Awaited<ReturnType<typeof currentImages>>;
  try {
    running = await currentImages(repoFileSource(deps.github, tip.treeSha), loaded.config, block.environment);
  } catch (error) {
    // A tip whose files cannot be read as an environment is no proposal of Ferry's: replace it.
    if (!isUserError(error)) throw error;
    return false;
  }
  return proposesNewer(loaded, block, (image) => running[image]?.tag);
}

function planBlock(input: UpsertInput): PlanBlock {
  return {
    version: 1,
    environment: input.plan.environment,
    ...(input.group ? { group: input.group } : {}),
    kind: input.kind,
    changes: input.plan.changes.map((change) => ({
      image: change.image,
      repository: change.repository,
      from: change.from,
      to: change.to,
      ...(change.revision ? { revision: change.revision } : {}),
    })),
    base: input.loaded.base.sha,
    ...(input.requestedBy ? { requestedBy: input.requestedBy } : {}),
  };
}

/** Opens the PR for a branch just written, with its labels (and reviewers for `merge: review`). */
async function openPull(
  deps: AppDeps<PullWork>,
  input: UpsertInput,
  branch: string,
  head: string,
  title: string,
  body: string,
): Promise<UpsertResult> {
  const { loaded } = input;
  const environment = input.plan.environment;
  let pull: PullRequestInfo;
  try {
    pull = await deps.github.createPull({ head: branch, base: loaded.baseBranch, title, body });
  } catch (error) {
    // Another replica opened it between our lookup and now: update theirs instead.
    const raced = await deps.github.findOpenPull(branch);
    // GitHub said one is open, yet none is now: it merged or closed in between. The sync is tried
    // again and plans on the base as it is then (docs/reliability.md row 80).
    if (!raced && isPullExistsRefusal(error))
      throw new TransientError("pull-gone", `the pull request from ${branch} merged or closed meanwhile`, {
        cause: error,
      });
    if (!raced || !ferryPull(deps, raced)) throw error;
    await deps.github.updatePull(raced.number, { title, body });
    return { action: "updated", pull: { ...raced, title, body } };
  }
  await deps.github.addLabels(pull.number, formatLabels(environment, input.group));
  const environmentConfig = loaded.config.environments[environment];
  let notice: string | undefined;
  if (environmentConfig?.merge === "review") {
    // The environment's reviewers and those of each image the PR changes.
    const { users, teams } = pullReviewers(
      loaded.config,
      environment,
      input.plan.changes.map((change) => change.image),
    );
    // GitHub refuses the whole request when one of them has no access to the repository; the PR
    // is open all the same, so it counts as opened and the requester is told.
    if (
      users.length + teams.length > 0 &&
      (await deps.github.requestReviewers(pull.number, users, teams)) === "refused"
    ) {
      const names = [...users, ...teams].map((name) => inlineCode(name)).join(", ");
      notice = `Opened #${pull.number}, but GitHub refused to request reviews from ${names}: each must be a collaborator (a team needs access to this repository).`;
      deps.log.warn({ environment, pull: pull.number }, "reviewers could not be requested");
    }
  }
  deps.log.info({ environment, pull: pull.number }, "pull request opened");
  deps.onPullRequest?.({ environment, number: pull.number, action: "opened" });
  await notifyPullOpened(deps, loaded.config, pull, planBlock(input));
  await afterWrite(deps, loaded, pull, head, true);
  return { action: "opened", pull, ...(notice ? { notice } : {}) };
}

async function afterWrite(
  deps: AppDeps<PullWork>,
  loaded: LoadedConfig,
  pull: PullRequestInfo,
  head: string,
  opened = false,
): Promise<void> {
  const environment = parseBranchName(pull.headRef) ?? "";
  const environmentConfig = loaded.config.environments[environment];
  if (environmentConfig?.merge !== "auto") return;
  // A closed environment is neither armed nor merged (docs/config.md "Change windows and freezes").
  if (!(await mayMergeNow(deps, loaded, pull.headRef.replace(/^ferry\//, ""), head))) return;
  // A base with a merge queue is never armed: GitHub would not queue a PR armed after its checks
  // passed, so Ferry enqueues it itself once they pass (mergeWhenReady).
  if (loaded.base.protected && !(await deps.github.hasMergeQueue?.(pull.baseRef))) {
    // Native auto-merge: GitHub merges once required checks pass. It is armed for the commit just
    // written (expectedHeadOid); whether GitHub checks that pin again at merge time is not
    // documented, so an update re-arms it for the new head. If the repo does not allow it, Ferry
    // merges itself when the checks report (mergeWhenReady on check events), also only that commit.
    if (!opened && pull.autoMerge) await deps.github.disableAutoMerge(pull).catch(() => undefined);
    // Just after a PR opens or moves, GitHub refuses auto-merge in `unstable` status while it
    // computes mergeability: ask again with bounded backoff. In `clean` status (the checks
    // already passed) it is refused for good, and Ferry merges the head it wrote itself.
    // A repository that does not allow auto-merge (GitHub's default) would refuse it: not asked,
    // one write fewer per PR.
    const allowed = (await deps.github.allowsAutoMerge?.()) !== false;
    const method = allowed ? await mergeMethodFor(deps, loaded, environment) : undefined;
    for (let attempt = 0; method !== undefined; attempt++) {
      const enabled = await deps.github
        .enableAutoMerge(pull, head, method)
        .catch(() => "unavailable" as const);
      if (enabled === "enabled") return;
      if (enabled !== "not-yet" || !(await pauseBeforeRetry(deps, attempt))) break;
    }
  }
  const fresh = await deps.github.getPull(pull.number);
  if (fresh) await mergeWhenReady(deps, loaded, fresh);
}

function sameChanges(a: PlanBlock, b: PlanBlock): boolean {
  const key = (block: PlanBlock): string =>
    JSON.stringify(
      block.changes.map((change) => [change.image, change.to.tag ?? "", change.to.digest]).sort(),
    );
  return a.kind === b.kind && key(a) === key(b);
}

function commitMessage(title: string, plan: EnvironmentPlan): string {
  const lines = plan.changes.flatMap((change) =>
    change.edits.map((edit) => `- ${edit.file}:${edit.line} ${edit.field}: ${edit.from} -> ${edit.to}`),
  );
  return `${title}\n\n${lines.join("\n")}\n`;
}
