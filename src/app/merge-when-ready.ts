import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type { PullRequestInfo } from "./github-port.js";
import { ferryPull } from "./pull-trust.js";

export type MergeOutcome = "merged" | "waiting" | "not-ferry" | "review" | "stopped";

/**
 * `merge: auto` without native auto-merge: Ferry merges once the required checks pass (all checks
 * when the base is unprotected), always with the head sha it validated, so a commit pushed after
 * validation aborts the merge (docs/reliability.md rows 13 and 24).
 */
export async function mergeWhenReady(
  deps: AppDeps,
  loaded: LoadedConfig,
  pull: PullRequestInfo,
): Promise<MergeOutcome> {
  // Only a PR Ferry opened, at the very commit it wrote (a commit pushed into it is never merged).
  const ferry = ferryPull(deps, pull);
  if (!ferry?.headIsFerrys || pull.state !== "open" || pull.merged) return "not-ferry";
  const environment = ferry.environment;
  if (pull.baseRef !== loaded.baseBranch) return "not-ferry";
  if (loaded.config.environments[environment]?.merge !== "auto") return "review";
  // Native auto-merge is on: GitHub merges when the requirements are met. Merging as well would
  // race it and turn the loser's 405 into a false "could not merge" comment.
  if (pull.autoMerge) return "waiting";
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
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await deps.github.merge(pull.number, pull.headSha);
    if (result === "merged") {
      deps.log.info({ environment, pull: pull.number, sha: pull.headSha }, "pull request merged");
      return "merged";
    }
    if (result === "base-moved") continue;
    if (result === "head-moved") {
      deps.log.warn({ environment, pull: pull.number }, "head moved after validation; merge aborted");
      return "stopped";
    }
    // Native auto-merge (or a second check event for the same head) may have merged it meanwhile:
    // that is success, not something to ask a person about.
    const now = await deps.github.getPull(pull.number);
    if (now?.merged) return "merged";
    if (now && now.state !== "open") return "stopped";
    await deps.github.comment(
      pull.number,
      "Ferry could not merge this pull request (not mergeable: conflict or unmet requirements). Resolve it and merge by hand.",
    );
    return "stopped";
  }
  return "waiting";
}
