import type { AppDeps } from "./app-deps.js";
import { loadRepoConfig } from "./load-repo-config.js";
import { mergeWhenReady } from "./merge-when-ready.js";
import { formatBranchName, parseUnitBranch } from "../core/pr/branch.js";

/**
 * Merges (or enqueues) the open Ferry PR of `branch` (a unit's) if its head is still `sha` and it
 * may merge: after its checks completed, an approval, or a merge queue that dropped it.
 */
export async function mergeFerryPullAt(
  deps: AppDeps,
  branch: string,
  sha: string,
  defaultBranch: string | undefined,
): Promise<void> {
  const unit = parseUnitBranch(branch);
  if (!unit) return;
  const loaded = await loadRepoConfig(deps, defaultBranch);
  if (!loaded.ok || loaded.config.environments[unit.environment]?.merge !== "auto") return;
  const pull = await deps.github.findOpenPull(formatBranchName(unit.environment, unit.group));
  if (pull && pull.headSha === sha) await mergeWhenReady(deps, loaded, pull);
}
