import type { PlanBlock } from "../core/pr/plan-block.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type { GitHubBranches, GitHubContents, PullRequestInfo } from "./github-port.js";

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

/**
 * Whether the base moved since this sync read it and already holds the plan's files as the plan
 * would write them (docs/reliability.md row 76): a sync that read the base and then waited for
 * the unit's lock, or a replica's slower sync, would otherwise put a change that merged meanwhile
 * on the old base again, as a second PR. One read of the base tip per branch write, and one per
 * file only when it moved.
 */
export async function alreadyOnMovedBase(
  deps: AppDeps<GitHubBranches & GitHubContents>,
  loaded: LoadedConfig,
  files: Record<string, string>,
): Promise<boolean> {
  const tip = await deps.github.getBranch(loaded.baseBranch);
  if (!tip || tip.sha === loaded.base.sha) return false;
  for (const [path, text] of Object.entries(files))
    if ((await deps.github.readFile(tip.sha, path)) !== text) return false;
  return true;
}
