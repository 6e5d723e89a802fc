import { environmentOrder, type FerryConfig } from "../core/config/schema.js";
import { readDeploymentStatus, type EnvironmentDeployment } from "../core/deployment-status.js";
import { promotionUnits } from "../core/pr/promotion-unit.js";
import type { StatusInput, UnitStatus } from "../core/pr/dashboard.js";
import { unitHold, type FerryState } from "../core/state/ferry-state.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { environmentHealth } from "./environment-health.js";
import { errorText } from "./error-text.js";
import type { GitHubContents, GitHubDeployments, GitHubPulls, PullRequestInfo } from "./github-port.js";
import { currentImages } from "./plan-environment.js";
import { repoFileSource } from "./repo-files.js";

/** What runs where, open PRs and holds: the `/ferry status` table and the dashboard's input. */
export async function collectStatus(
  deps: AppDeps<GitHubContents & GitHubPulls & GitHubDeployments>,
  loaded: LoadedConfig,
  state: FerryState,
  knownPulls: Record<string, PullRequestInfo | undefined> = {},
): Promise<StatusInput> {
  const { config } = loaded;
  const files = repoFileSource(deps.github, loaded.base.treeSha);
  const order = environmentOrder(config);
  const running: StatusInput["running"] = {};
  const pulls: StatusInput["pulls"] = {};
  const deployments: NonNullable<StatusInput["deployments"]> = {};
  const units: NonNullable<StatusInput["units"]> = {};
  for (const environment of order) {
    try {
      const images = await currentImages(files, config, environment);
      running[environment] = Object.fromEntries(
        Object.entries(images).map(([name, image]) => [name, { tag: image.tag, digest: image.digest }]),
      );
    } catch (error) {
      deps.log.warn(
        { environment, error: errorText(error, deps.secrets) },
        "status: cannot read environment",
      );
      running[environment] = {};
    }
    // One PR per unit (docs/config.md "Grouping"): the default unit's in its own column as before.
    for (const unit of promotionUnits(config, environment)) {
      const pull =
        unit.branch in knownPulls ? knownPulls[unit.branch] : await deps.github.findOpenPull(unit.branch);
      const open = pull ? { number: pull.number, title: pull.title } : undefined;
      if (!unit.group) {
        pulls[environment] = open;
        continue;
      }
      const hold = unitHold(state, environment, unit.group);
      const status: UnitStatus = {
        label: `${unit.group.kind} ${unit.group.name}`,
        ...(open ? { pull: open } : {}),
        ...(hold ? { hold } : {}),
      };
      for (const image of unit.images) (units[environment] ??= {})[image] = status;
    }
    if (!(environment in pulls)) pulls[environment] = undefined;
    const deployment = await latestDeployment(deps, config, environment, loaded.baseBranch);
    if (deployment) deployments[environment] = deployment;
  }
  const skipped = files.skipped?.() ?? [];
  return {
    ...(skipped.length > 0 ? { skipped } : {}),
    environments: order.map((name) => ({
      name,
      ...(config.environments[name]?.from ? { from: config.environments[name].from } : {}),
    })),
    images: Object.keys(config.images),
    running,
    pulls,
    holds: state.holds,
    ...(Object.keys(deployments).length > 0 ? { deployments } : {}),
    ...(Object.keys(units).length > 0 ? { units } : {}),
  };
}

/**
 * The environment's latest health from its source (its reconciler's Deployment status, or Argo CD's, Flux's or a named status: sync, health,
 * drift), or undefined when none was reported or it cannot be read (the status still answers).
 */
async function latestDeployment(
  deps: AppDeps<GitHubDeployments>,
  config: FerryConfig,
  environment: string,
  branch: string,
): Promise<EnvironmentDeployment | undefined> {
  try {
    const { health } = await environmentHealth(deps, config, environment, branch);
    if (health === undefined) return undefined;
    return readDeploymentStatus({
      state: health.state,
      description: health.description ?? "",
      sha: health.sha,
      at: health.since.toISOString(),
    });
  } catch (error) {
    deps.log.warn(
      { environment, error: errorText(error, deps.secrets) },
      "status: cannot read the environment's Deployment status",
    );
    return undefined;
  }
}
