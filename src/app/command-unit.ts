import { UserError } from "../core/errors.js";
import { unitOfBranch, type UnitImages } from "../core/pr/promotion-unit.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type { GitHubPulls, RepoIdentity } from "./github-port.js";
import { ferryPull } from "./pull-trust.js";

/**
 * The unit a command acts on (docs/config.md "Grouping"): given on a Ferry PR of a group or of one
 * image, that unit; anywhere else (an issue, the dashboard, a PR of the environment's default unit,
 * a PR of another environment), the whole environment. Costs one read, only on a pull request.
 */
export async function commandUnit(
  deps: AppDeps<RepoIdentity & GitHubPulls>,
  loaded: LoadedConfig,
  environment: string,
  issueNumber: number,
  isPullRequest: boolean | undefined,
): Promise<UnitImages | undefined> {
  if (!isPullRequest) return undefined;
  const pull = await deps.github.getPull(issueNumber);
  const ferry = pull && ferryPull(deps, pull);
  if (!pull || !ferry?.group || ferry.environment !== environment) return undefined;
  const unit = unitOfBranch(loaded.config, pull.headRef);
  if (!unit || unit.images.length === 0)
    throw new UserError(
      "empty-unit",
      `no image is in this pull request's ${ferry.group.kind} any more (see .github/ferry.yml); give the command on an issue to act on all of ${environment}`,
    );
  return unit;
}
