import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type { PullRequestInfo } from "./github-port.js";
import { MERGEABLE_STATES, mergeWhenReady, type MergeOutcome, type PullWork } from "./merge-when-ready.js";
import { ferryPull } from "./pull-trust.js";

/**
 * Merges a Ferry PR that nothing else will (docs/reliability.md rows 71–73): one an approval made
 * mergeable, one whose mergeability GitHub computed after Ferry stopped asking, one a merge queue
 * dropped. Only a `merge: auto` PR at the head Ferry wrote that GitHub calls mergeable right now
 * is tried, so a PR blocked for a reason a person must fix (a missing approval, a conflict) costs
 * one read and gets no comment on each scan.
 */
export async function retryStuckMerge(
  deps: AppDeps<PullWork>,
  loaded: LoadedConfig,
  pull: PullRequestInfo,
): Promise<MergeOutcome | "skipped"> {
  const ferry = ferryPull(deps, pull);
  if (!ferry?.headIsFerrys || pull.baseRef !== loaded.baseBranch) return "skipped";
  if (loaded.config.environments[ferry.environment]?.merge !== "auto") return "skipped";
  const fresh = await deps.github.getPull(pull.number);
  if (!fresh || fresh.state !== "open" || fresh.merged || fresh.headSha !== pull.headSha) return "skipped";
  if (fresh.mergeable !== true || !MERGEABLE_STATES.has(fresh.mergeableState ?? "")) return "skipped";
  // Armed and mergeable for a whole scan interval: GitHub acts only on a change, so it will not
  // merge or queue it now. Ferry merges (or enqueues) its own head; if GitHub merges it at the
  // same moment, the loser's refusal finds it merged and says nothing.
  return mergeWhenReady(deps, loaded, { ...fresh, autoMerge: false });
}
