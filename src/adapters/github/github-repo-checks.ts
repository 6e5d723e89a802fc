import type {
  DeploymentRecord,
  DeploymentRecords,
  DeploymentStatusRecord,
} from "../../core/history/deployments.js";
import type {
  CheckRunInput,
  ChecksState,
  DeploymentHealth,
  GitHubChecks,
  GitHubDeployments,
} from "../../app/github-port.js";
import { type GitHubRepoContext, orUndefinedOn404 } from "./github-repo-context.js";

/**
 * Checks and deployments: a commit's CI state (here or in an image's source repository), Ferry's
 * own check runs, and what the reconciler reported through Deployment statuses (`GitHubChecks`,
 * `GitHubDeployments`).
 */
export function checksOf(ctx: GitHubRepoContext): Required<GitHubChecks & GitHubDeployments> {
  async function checksState(
    sha: string,
    contexts?: string[],
    repo?: { owner: string; repo: string },
  ): Promise<ChecksState | "none"> {
    const target = repo ?? ctx.r;
    const [statuses, runs] = await Promise.all([
      ctx.octokit.rest.repos.getCombinedStatusForRef({ ...target, ref: sha, per_page: 100 }),
      ctx.octokit.rest.checks.listForRef({ ...target, ref: sha, per_page: 100 }),
    ]);
    const results = new Map<string, ChecksState>();
    for (const item of statuses.data.statuses) {
      if (!results.has(item.context))
        results.set(
          item.context,
          item.state === "success" ? "success" : item.state === "pending" ? "pending" : "failure",
        );
    }
    for (const run of runs.data.check_runs) {
      const state: ChecksState =
        run.status !== "completed"
          ? "pending"
          : run.conclusion === "success" || run.conclusion === "neutral" || run.conclusion === "skipped"
            ? "success"
            : "failure";
      const previous = results.get(run.name);
      if (!previous || previous === "success") results.set(run.name, state);
    }
    const relevant =
      contexts && contexts.length > 0
        ? contexts.map((context) => results.get(context) ?? "pending")
        : [...results.values()];
    if (relevant.length === 0) return "none";
    if (relevant.includes("failure")) return "failure";
    if (relevant.includes("pending")) return "pending";
    return "success";
  }

  async function createCheckRun(input: CheckRunInput): Promise<void> {
    await ctx.octokit.rest.checks.create({
      ...ctx.r,
      name: input.name,
      head_sha: input.headSha,
      status: "completed",
      conclusion: input.conclusion,
      output: { title: input.title, summary: input.summary, annotations: input.annotations },
    });
  }

  async function tagCommit(repo: { owner: string; repo: string }, tag: string): Promise<string | undefined> {
    const ref = await orUndefinedOn404(ctx.octokit.rest.git.getRef({ ...repo, ref: `tags/${tag}` }));
    if (!ref) return undefined;
    if (ref.data.object.type !== "tag") return ref.data.object.sha;
    const annotated = await ctx.octokit.rest.git.getTag({ ...repo, tag_sha: ref.data.object.sha });
    return annotated.data.object.sha;
  }

  async function deploymentHealth(environment: string): Promise<DeploymentHealth | undefined> {
    const { data } = await ctx.octokit.rest.repos.listDeployments({ ...ctx.r, environment, per_page: 1 });
    const deployment = data[0];
    if (!deployment) return undefined;
    const statuses = await ctx.octokit.rest.repos.listDeploymentStatuses({
      ...ctx.r,
      deployment_id: deployment.id,
      per_page: 1,
    });
    const latest = statuses.data[0];
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
    environment: string,
    bounds: { maxDeployments: number; maxStatuses: number },
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
    for (const deployment of data.slice(0, bounds.maxDeployments)) {
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
  return { checksState, createCheckRun, tagCommit, deploymentHealth, listDeploymentRecords };
}
