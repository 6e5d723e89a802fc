import { recordDeployment } from "../core/state/ferry-state.js";
import type { AppDeps } from "./app-deps.js";
import type { GitHubComments, PullRequestInfo } from "./github-port.js";
import { loadRepoConfig, type ConfigReading } from "./load-repo-config.js";
import { ferryPull } from "./pull-trust.js";
import { notifyPullMerged } from "./notifications.js";
import type { StateWork } from "./dashboard-issue.js";
import { updateState } from "./update-state.js";
import { shortSha } from "../core/commit-sha.js";

/**
 * A Ferry PR was merged: the tags it brought in become the environment's floors, so that a human
 * edit or revert below them is never undone by the next scan (docs/architecture.md "Floors and holds"). Rollback PRs leave the
 * floors as `/rollback` set them. Each change also enters the environment's history of deployed
 * versions, which `/rollback` walks back. The dashboard is refreshed on the way. Only a PR Ferry opened and
 * merged at the commit it wrote counts: the floors come from its sealed plan, never from a body
 * someone else wrote.
 */
export async function recordMerge(
  deps: AppDeps<ConfigReading & StateWork & GitHubComments>,
  pull: PullRequestInfo,
): Promise<boolean> {
  const ferry = ferryPull(deps, pull);
  if (!pull.merged || !ferry) return false;
  const block = ferry.block;
  if (!block || !ferry.headIsFerrys) {
    await deps.github.comment(
      pull.number,
      `This pull request was merged at ${shortSha(pull.headSha)}, a commit Ferry did not write (or with a plan Ferry cannot verify): Ferry records no floor from it.`,
    );
    deps.log.warn({ pull: pull.number, sha: pull.headSha }, "merged at a head Ferry did not write");
    return false;
  }
  const environment = ferry.environment;
  const loaded = await loadRepoConfig(deps, pull.baseRef);
  if (!loaded.ok) return false;
  await updateState(deps, loaded, (state) => {
    const rollback = block.kind === "rollback";
    for (const change of block.changes) {
      recordDeployment(state, environment, change.image, { from: change.from, to: change.to, rollback });
      if (!rollback && change.to.tag !== undefined)
        (state.floors[environment] ??= {})[change.image] = change.to.tag;
    }
  });
  await notifyPullMerged(deps, loaded.config, pull, block);
  return true;
}
