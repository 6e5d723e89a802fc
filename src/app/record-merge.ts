import { parseBody } from "../core/pr/body.js";
import { parseBranchName } from "../core/pr/branch.js";
import type { AppDeps } from "./app-deps.js";
import type { PullRequestInfo } from "./github-port.js";
import { loadRepoConfig } from "./load-repo-config.js";
import { updateState } from "./state.js";

/**
 * A Ferry PR was merged: the tags it brought in become the environment's floors, so that a human
 * edit or revert below them is never undone by the next scan (docs/architecture.md
 * "Floors and holds"). Rollback PRs leave the
 * floors as `/rollback` set them. The dashboard is refreshed on the way.
 */
export async function recordMerge(deps: AppDeps, pull: PullRequestInfo): Promise<boolean> {
  const environment = parseBranchName(pull.headRef);
  const block = parseBody(pull.body);
  if (!pull.merged || !environment || !block || block.environment !== environment) return false;
  const loaded = await loadRepoConfig(deps, pull.baseRef);
  if (!loaded.ok) return false;
  await updateState(deps, loaded, (state) => {
    if (block.kind === "rollback") return;
    for (const change of block.changes) {
      if (change.to.tag !== undefined) (state.floors[environment] ??= {})[change.image] = change.to.tag;
    }
  });
  return true;
}
