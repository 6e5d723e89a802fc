import { chooseMergeMethod, type MergeMethod } from "../core/pr/merge-method.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type {
  GitHubBranches,
  GitHubChecks,
  GitHubComments,
  GitHubContents,
  GitHubMerges,
  GitHubPulls,
  PullRequestInfo,
  RepoIdentity,
} from "./github-port.js";
import { closeIfObsolete } from "./obsolete-units.js";
import { ferryPull } from "./pull-trust.js";
import { mayMergeNow } from "./window-gate.js";

/** The GitHub roles for writing Ferry's PR branch, opening the PR and merging it. */
export type PullWork = RepoIdentity &
  GitHubBranches &
  GitHubChecks &
  GitHubMerges &
  GitHubPulls &
  GitHubComments &
  GitHubContents;

export type MergeOutcome = "merged" | "waiting" | "not-ferry" | "review" | "stopped";

/**
 * `merge: auto` without native auto-merge: Ferry merges once the required checks pass (all checks
 * when the base is unprotected), always with the head sha it validated, so a commit pushed after
 * validation aborts the merge (docs/reliability.md rows 13 and 24).
 */
export async function mergeWhenReady(
  deps: AppDeps<PullWork>,
  loaded: LoadedConfig,
  pull: PullRequestInfo,
): Promise<MergeOutcome> {
  // Only a PR Ferry opened, at the very commit it wrote (a commit pushed into it is never merged).
  const ferry = ferryPull(deps, pull);
  if (!ferry?.headIsFerrys || pull.state !== "open" || pull.merged) return "not-ferry";
  const environment = ferry.environment;
  if (pull.baseRef !== loaded.baseBranch) return "not-ferry";
  // Its images moved to another unit's PR (docs/config.md "Grouping"): closed, never merged.
  if (await closeIfObsolete(deps, loaded, pull, ferry.block)) return "stopped";
  if (loaded.config.environments[environment]?.merge !== "auto") return "review";
  // Never into a closed environment (a change window or freeze), unless overridden for this head.
  if (!(await mayMergeNow(deps, loaded, environment, pull.headSha))) return "waiting";
  // Native auto-merge is on: GitHub merges when the requirements are met. Merging as well would
  // race it and turn the loser's 405 into a false "could not merge" comment. On a base with a merge
  // queue GitHub only queues an armed PR on a later change, so one armed after its checks passed
  // sits armed for ever (docs/reliability.md row 70): Ferry enqueues it itself once they pass.
  const queueBase = pull.autoMerge && (await deps.github.hasMergeQueue?.(pull.baseRef)) === true;
  if (pull.autoMerge && !queueBase) return "waiting";
  const required = await deps.github.requiredChecks(pull.baseRef);
  const state = await deps.github.checksState(pull.headSha, required);
  // Required contexts must all have passed; without any (unprotected base, or protection without
  // required checks) every reported check must pass, and a commit with no checks at all may merge.
  if (
    required !== undefined && required.length > 0
      ? state !== "success"
      : state === "pending" || state === "failure"
  )
    return "waiting";
  if (queueBase) {
    deps.log.info({ environment, pull: pull.number }, "armed pull request enqueued: checks have passed");
    return enqueueOrReport(deps, environment, pull);
  }
  // One merge of a PR at a time in this process: an event's merge (a check that passed) and the
  // write's own can arrive together, and the second would only get GitHub's 405. The one that
  // waited reads the PR again and stops if the first merged it.
  const key = `${deps.github.owner}/${deps.github.repo}#merge:${pull.number}`;
  const waited = deps.locks.busy(key);
  return deps.locks.run(key, async () => {
    if (waited) {
      const now = await deps.github.getPull(pull.number);
      if (now?.merged) return "merged";
      if (!now || now.state !== "open" || now.headSha !== pull.headSha) return "stopped";
    }
    return mergeValidated(deps, loaded, environment, pull);
  });
}

/** Merges the head `mergeWhenReady` validated, with the retries GitHub's answers call for. */
async function mergeValidated(
  deps: AppDeps<PullWork>,
  loaded: LoadedConfig,
  environment: string,
  pull: PullRequestInfo,
): Promise<MergeOutcome> {
  const method = await mergeMethodFor(deps, loaded, environment);
  let baseMoves = 0;
  let retries = 0;
  for (;;) {
    const result = await deps.github.merge(pull.number, pull.headSha, method);
    if (result === "merged") {
      deps.log.info({ environment, pull: pull.number, sha: pull.headSha }, "pull request merged");
      return "merged";
    }
    if (result === "base-moved") {
      if (++baseMoves >= 3) return "waiting";
      continue;
    }
    if (result === "head-moved") {
      deps.log.warn({ environment, pull: pull.number }, "head moved after validation; merge aborted");
      return "stopped";
    }
    if (result === "queue-required") return enqueueOrReport(deps, environment, pull);
    if (result === "review-required") {
      // Not for a person to merge by hand: the approval's event retries (docs/reliability.md row 71).
      deps.log.info({ environment, pull: pull.number }, "merge waits for an approving review");
      return "waiting";
    }
    if (result === "method-refused") {
      await deps.github.comment(
        pull.number,
        `Ferry could not merge this pull request: the repository does not allow the ${method} merge method. Set \`mergeMethod\` for ${environment} in .github/ferry.yml to one it allows, or merge by hand.`,
      );
      return "stopped";
    }
    // Native auto-merge (or a second check event for the same head) may have merged it meanwhile:
    // that is success, not something to ask a person about.
    const now = await deps.github.getPull(pull.number);
    if (now?.merged) return "merged";
    if (now && now.state !== "open") return "stopped";
    // GitHub answers 405 while it still computes mergeability in the background (`mergeable:
    // null`), and just after that; a PR it calls mergeable is asked again, with backoff.
    if (now?.mergeableState === "behind") {
      // The base requires up-to-date branches and moved on: the sync its push brings (or the next
      // scan) rebuilds the branch on it, and the new head's checks merge it (row 75).
      deps.log.info({ environment, pull: pull.number }, "behind a base that requires up-to-date branches");
      return "waiting";
    }
    const computing = now?.mergeable === null || now?.mergeableState === "unknown";
    const transient = computing || MERGEABLE_STATES.has(now?.mergeableState ?? "");
    if (transient && (await pauseBeforeRetry(deps, retries++))) continue;
    if (computing) {
      // Still unknown after the last retry: the next check event or scan tries again.
      deps.log.warn(
        { environment, pull: pull.number },
        "mergeability still being computed; merge left for later",
      );
      return "waiting";
    }
    await deps.github.comment(
      pull.number,
      "Ferry could not merge this pull request (not mergeable: conflict or unmet requirements). Resolve it and merge by hand.",
    );
    return "stopped";
  }
}

/**
 * The base takes PRs only through its merge queue (Renovate does the same:
 * https://github.com/renovatebot/renovate/issues/31525): the queue merges once its checks pass.
 * A PR already queued counts as queued; a refusal is said on the PR.
 */
async function enqueueOrReport(
  deps: AppDeps<PullWork>,
  environment: string,
  pull: PullRequestInfo,
): Promise<MergeOutcome> {
  const queued = await deps.github.enqueuePull?.(pull, pull.headSha);
  if (queued === "queued") {
    deps.log.info({ environment, pull: pull.number }, "pull request added to the merge queue");
    return "waiting";
  }
  // The queue may have merged it meanwhile, for another event about the same head.
  const now = await deps.github.getPull(pull.number);
  if (now?.merged) return "merged";
  if (now && now.state !== "open") return "stopped";
  await deps.github.comment(
    pull.number,
    `Ferry could not add this pull request to the merge queue${queued ? `: ${queued.refused}` : ""}. Add it by hand.`,
  );
  return "stopped";
}

/**
 * How an environment's PR is merged: its `mergeMethod` when the repository allows it, else one it
 * does (`allow_squash_merge`, `allow_merge_commit`, `allow_rebase_merge`; GitHub refuses any
 * other with 405, https://docs.github.com/en/rest/pulls/pulls#merge-a-pull-request).
 */
export async function mergeMethodFor(
  deps: AppDeps<GitHubMerges>,
  loaded: LoadedConfig,
  environment: string,
): Promise<MergeMethod> {
  const allowed = await deps.github.allowedMergeMethods().catch(() => undefined);
  return chooseMergeMethod(allowed, loaded.config.environments[environment]?.mergeMethod);
}

/** `mergeable_state` values in which GitHub lets a PR merge (a refusal then was transient). */
export const MERGEABLE_STATES: ReadonlySet<string> = new Set(["clean", "unstable", "has_hooks"]);

/** Pauses between attempts while GitHub computes a PR's mergeability (1 + 2 + 4 + 8 s at most). */
export const MERGEABILITY_RETRY_DELAYS_MS: readonly number[] = [1000, 2000, 4000, 8000];

/**
 * Waits before retry number `attempt` (from 0) and says whether to retry: false once the delays
 * (`deps.mergeabilityRetryDelaysMs`, bounded) are used up.
 */
export async function pauseBeforeRetry(
  deps: Pick<AppDeps, "mergeabilityRetryDelaysMs">,
  attempt: number,
): Promise<boolean> {
  const delays = deps.mergeabilityRetryDelaysMs ?? MERGEABILITY_RETRY_DELAYS_MS;
  const delay = delays[attempt];
  if (delay === undefined) return false;
  await new Promise((resolve) => setTimeout(resolve, delay));
  return true;
}
