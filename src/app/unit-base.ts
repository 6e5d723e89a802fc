import type { PlanBlock } from "../core/pr/plan-block.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type { GitHubContents, PullRequestInfo } from "./github-port.js";

/**
 * Whether an open unit PR that already carries the plan must be rebuilt on the current base
 * anyway (docs/config.md "Grouping"): the units of one environment edit the same files, so once
 * another unit's PR merged, this one's files may conflict with the base. When the base moved
 * since the PR was written, the plan (made on the current base) is compared with the PR head's
 * files: one read per file the plan writes, and none while the base stays where it was.
 */
export async function baseMovedUnder(
  deps: AppDeps<GitHubContents>,
  loaded: LoadedConfig,
  written: PlanBlock,
  pull: PullRequestInfo,
  files: Record<string, string>,
): Promise<boolean> {
  if (written.base === undefined || written.base === loaded.base.sha) return false;
  for (const [path, text] of Object.entries(files))
    if ((await deps.github.readFile(pull.headSha, path)) !== text) return true;
  return false;
}
