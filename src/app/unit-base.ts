import type { PlanBlock } from "../core/pr/plan-block.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type { GitHubBranches, GitHubContents } from "./github-port.js";

/**
 * Whether an open unit PR that already carries the plan must be rebuilt on the current base
 * anyway (docs/reliability.md row 77): the base changed, since the PR was written, a file the PR
 * edits. Another unit of the environment merged an edit to the same file (docs/config.md
 * "Grouping"), a person edited the line by hand, or the PR was written on a base that a previous
 * Ferry PR had just left behind: the PR then conflicts with the base, or would undo that edit, and
 * never merges as it is. Two reads per file the plan writes, and none while the base stays where
 * the PR was written.
 */
export async function baseMovedUnder(
  deps: AppDeps<GitHubContents>,
  loaded: LoadedConfig,
  written: PlanBlock,
  files: Record<string, string>,
): Promise<boolean> {
  if (written.base === undefined || written.base === loaded.base.sha) return false;
  for (const path of Object.keys(files)) {
    const [then, now] = await Promise.all([
      deps.github.readFile(written.base, path),
      deps.github.readFile(loaded.base.sha, path),
    ]);
    if (then !== now) return true;
  }
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
