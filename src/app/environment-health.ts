import type { FerryConfig } from "../core/config/schema.js";
import { healthSourceOf, type HealthSource } from "../core/health/health-source.js";
import type { AppDeps } from "./app-deps.js";
import type { DeploymentHealth, GitHubDeployments } from "./github-port.js";

/** Commits of the config branch searched for an engine's commit status or check run (newest first). */
export const HEALTH_COMMITS = 20;

/**
 * An environment's latest health from the source its config names (docs/config.md "Health"):
 * Ferry's reconciler's Deployment statuses by default, or what Argo CD, Flux or a named status or
 * check run wrote on the config commits of `branch`. Undefined when the source never reported
 * (or the port cannot read it).
 */
export async function environmentHealth(
  deps: AppDeps<GitHubDeployments>,
  config: FerryConfig,
  environment: string,
  branch: string,
): Promise<{ source: HealthSource; health: DeploymentHealth | undefined }> {
  const source = healthSourceOf(config, environment, deps.appLogin);
  if (source.kind === "deployments")
    return { source, health: await deps.github.deploymentHealth(source.environment, source.reporters) };
  const read = deps.github.commitHealth?.bind(deps.github);
  return { source, health: read ? await read({ source, branch, commits: HEALTH_COMMITS }) : undefined };
}
