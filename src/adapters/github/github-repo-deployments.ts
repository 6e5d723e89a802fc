import type {
  DeploymentRecord,
  DeploymentRecords,
  DeploymentStatusRecord,
} from "../../core/history/deployments.js";
import type { DeploymentHealth, GitHubDeployments } from "../../app/github-port.js";
import type { GitHubRepoContext } from "./github-repo-context.js";
import { isReporter } from "../../core/health/health-reporters.js";

/** How many of an environment's newest Deployments (and of a Deployment's statuses) are searched for a reporter's. */
const REPORTER_SEARCH = 30;

/**
 * Deployments: what the reconciler reported through Deployment statuses, only by the named
 * reporters (`GitHubDeployments`; a commit's health report is `github-repo-health.ts`).
 */
export function deploymentsOf(ctx: GitHubRepoContext): Omit<Required<GitHubDeployments>, "commitHealth"> {
  return {
    deploymentHealth: (environment, reporters) => deploymentHealth(ctx, environment, reporters),
    listDeploymentRecords: (environment, bounds, reporters) =>
      listDeploymentRecords(ctx, environment, bounds, reporters),
  };
}

async function deploymentHealth(
  ctx: GitHubRepoContext,
  environment: string,
  reporters: readonly string[],
): Promise<DeploymentHealth | undefined> {
  // Newest first; a writer's own Deployments and statuses are passed over, within one page each.
  const { data } = await ctx.octokit.rest.repos.listDeployments({
    ...ctx.r,
    environment,
    per_page: REPORTER_SEARCH,
  });
  const deployment = data.find((candidate) => isReporter(reporters, candidate.creator?.login));
  if (!deployment) return undefined;
  const statuses = await ctx.octokit.rest.repos.listDeploymentStatuses({
    ...ctx.r,
    deployment_id: deployment.id,
    per_page: REPORTER_SEARCH,
  });
  const latest = statuses.data.find((status) => isReporter(reporters, status.creator?.login));
  if (!latest) return undefined;
  const health: DeploymentHealth = {
    sha: deployment.sha,
    state: latest.state as DeploymentHealth["state"],
    since: new Date(latest.created_at),
  };
  if (latest.description) health.description = latest.description;
  return health;
}

async function listDeploymentRecords(
  ctx: GitHubRepoContext,
  environment: string,
  bounds: { maxDeployments: number; maxStatuses: number },
  reporters: readonly string[],
): Promise<DeploymentRecords> {
  // One more than the bound: whether older Deployments exist that were not read.
  const { data } = await ctx.octokit.rest.repos.listDeployments({
    ...ctx.r,
    environment,
    per_page: Math.min(100, bounds.maxDeployments + 1),
  });
  let stopped = data.length > bounds.maxDeployments;
  let statusesRead = 0;
  const deployments: DeploymentRecord[] = [];
  for (const deployment of data
    .slice(0, bounds.maxDeployments)
    .filter((candidate) => isReporter(reporters, candidate.creator?.login))) {
    const budget = bounds.maxStatuses - statusesRead;
    if (budget <= 0) {
      stopped = true;
      break;
    }
    const statuses = await ctx.octokit.rest.repos.listDeploymentStatuses({
      ...ctx.r,
      deployment_id: deployment.id,
      per_page: Math.min(100, budget),
    });
    statusesRead += statuses.data.length;
    if (statuses.data.length >= budget) stopped = true;
    deployments.push({
      sha: deployment.sha,
      // GitHub lists them newest first.
      statuses: statuses.data
        .filter((status) => isReporter(reporters, status.creator?.login))
        .map((status) => ({
          state: status.state as DeploymentStatusRecord["state"],
          description: status.description ?? "",
          at: new Date(status.created_at),
        }))
        .reverse(),
    });
  }
  return { environment, deployments, statusesRead, stopped };
}
