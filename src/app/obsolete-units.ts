import { formatBranchName } from "../core/pr/branch.js";
import { unitOfBranch, type UnitImages } from "../core/pr/promotion-unit.js";
import type { PlanBlock } from "../core/pr/plan-block.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type { GitHubComments, GitHubPulls, PullRequestInfo, RepoIdentity } from "./github-port.js";
import { ferryPull } from "./pull-trust.js";

/**
 * PRs of a unit the config no longer gives those images (docs/config.md "Grouping": an image
 * moved to another group, or `grouping` changed). A unit that still has images is re-planned by
 * the next sync, and its PR updated to carry only them; a PR that carries an image of another unit
 * is never merged but closed, since that unit's own PR carries the image now.
 */
export function imagesElsewhere(loaded: LoadedConfig, headRef: string, block: PlanBlock): string[] {
  const unit = unitOfBranch(loaded.config, headRef);
  const own = new Set(unit?.images ?? []);
  return block.changes.map((change) => change.image).filter((image) => !own.has(image));
}

/** Closes a Ferry PR whose plan carries images of another unit now; true when it did. */
export async function closeIfObsolete(
  deps: AppDeps<GitHubPulls & GitHubComments>,
  loaded: LoadedConfig,
  pull: PullRequestInfo,
  block: PlanBlock | undefined,
): Promise<boolean> {
  if (!block || block.kind !== "bump") return false;
  const moved = imagesElsewhere(loaded, pull.headRef, block);
  if (moved.length === 0) return false;
  await deps.github.comment(
    pull.number,
    `Closing: ${moved.join(", ")} ${moved.length === 1 ? "is" : "are"} no longer in this pull request's group (see .github/ferry.yml); the PR of ${moved.length === 1 ? "its" : "their"} group carries ${moved.length === 1 ? "it" : "them"}.`,
  );
  await deps.github.updatePull(pull.number, { state: "closed" });
  deps.log.info(
    { pull: pull.number, images: moved },
    "pull request closed: its images moved to another unit",
  );
  return true;
}

/**
 * A scan of an environment whose images are all in groups now: the old `ferry/<env>` PR, if one is
 * open, carries images of other units; it is closed (one lookup, on scans only).
 */
export async function closeEmptyDefaultUnit(
  deps: AppDeps<RepoIdentity & GitHubPulls & GitHubComments>,
  loaded: LoadedConfig,
  environment: string,
  units: readonly UnitImages[],
  pulls: Record<string, PullRequestInfo | undefined>,
  reason: string,
): Promise<void> {
  if (reason !== "scan" || units.length === 0 || units.some((unit) => !unit.group)) return;
  const branch = formatBranchName(environment);
  if ((unitOfBranch(loaded.config, branch)?.images.length ?? 0) > 0) return;
  // Listed by this scan as having no PR: nothing to close. A listed PR is read again.
  if (branch in pulls && pulls[branch] === undefined) return;
  const pull = await deps.github.findOpenPull(branch);
  const ferry = pull && ferryPull(deps, pull);
  if (pull && ferry && (await closeIfObsolete(deps, loaded, pull, ferry.block))) pulls[branch] = undefined;
}

/**
 * A scan's listing also shows Ferry PRs on the branch of a group or image unit the config no longer
 * has (its images moved to other units, the group was removed, `grouping` changed): no sync of that
 * unit will ever come to update them, so they are closed here, each read again first. A steady scan
 * lists none of these and makes no request for them.
 */
export async function closeRemovedUnits(
  deps: AppDeps<RepoIdentity & GitHubPulls & GitHubComments>,
  loaded: LoadedConfig,
  listed: readonly PullRequestInfo[],
): Promise<void> {
  for (const entry of listed) {
    const unit = unitOfBranch(loaded.config, entry.headRef);
    if (!unit?.group || unit.images.length > 0) continue;
    const pull = await deps.github.findOpenPull(entry.headRef);
    const ferry = pull && ferryPull(deps, pull);
    if (pull && ferry) await closeIfObsolete(deps, loaded, pull, ferry.block);
  }
}
