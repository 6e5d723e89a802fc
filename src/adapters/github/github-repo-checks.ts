import type {
  DeploymentRecord,
  DeploymentRecords,
  DeploymentStatusRecord,
} from "../../core/history/deployments.js";
import type {
  CheckRunInput,
  CheckRunResult,
  ChecksState,
  DeploymentHealth,
  GitHubChecks,
  GitHubDeployments,
} from "../../app/github-port.js";
import { fitCheckOutput, inBatches } from "../../core/pr/github-limits.js";
import { type GitHubRepoContext, orUndefinedOn404 } from "./github-repo-context.js";
import { isReporter } from "../../core/health/health-reporters.js";

/** How many of an environment's newest Deployments (and of a Deployment's statuses) are searched for a reporter's. */
const REPORTER_SEARCH = 30;

/** GitHub lists at most 100 checks or statuses a page. */
const PER_PAGE = 100;
/**
 * Pages of checks, and of statuses, read for one commit: 1,000 of each. Matrix CI may report more
 * than one page; past this bound the state is never "success" (an unread check may have failed).
 */
export const MAX_CHECK_PAGES = 10;

/**
 * Reads pages 1, 2, … until `total` items are read, a page comes back short, or the bound is hit
 * (`cut`: some were not read).
 */
async function readPages<T>(
  read: (page: number) => Promise<{ items: T[]; total: number }>,
): Promise<{ items: T[]; cut: boolean }> {
  const items: T[] = [];
  for (let page = 1; page <= MAX_CHECK_PAGES; page++) {
    const answer = await read(page);
    items.push(...answer.items);
    if (answer.items.length < PER_PAGE || items.length >= answer.total) return { items, cut: false };
  }
  return { items, cut: true };
}

/**
 * Checks and deployments: a commit's CI state (here or in an image's source repository), Ferry's
 * own check runs, and what the reconciler reported through Deployment statuses (`GitHubChecks`,
 * `GitHubDeployments`).
 */
export function checksOf(
  ctx: GitHubRepoContext,
): Omit<Required<GitHubChecks & GitHubDeployments>, "commitHealth"> {
  async function checksState(
    sha: string,
    contexts?: string[],
    repo?: { owner: string; repo: string },
  ): Promise<ChecksState | "none"> {
    const target = repo ?? ctx.r;
    const [statuses, runs] = await Promise.all([readStatuses(target, sha), readCheckRuns(target, sha)]);
    const results = new Map<string, ChecksState>();
    for (const item of statuses.items) {
      if (!results.has(item.context))
        results.set(
          item.context,
          item.state === "success" ? "success" : item.state === "pending" ? "pending" : "failure",
        );
    }
    for (const run of runs.items) {
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
    if (relevant.length === 0 && !statuses.cut && !runs.cut) return "none";
    if (relevant.includes("failure")) return "failure";
    if (relevant.includes("pending")) return "pending";
    // Past the pages read, an unread check may have failed: never conclude success then.
    return statuses.cut || runs.cut ? "pending" : "success";
  }

  /** Every commit status (newest first per context), up to `MAX_CHECK_PAGES` pages. */
  async function readStatuses(target: { owner: string; repo: string }, ref: string) {
    return readPages(async (page) => {
      const { data } = await ctx.octokit.rest.repos.getCombinedStatusForRef({
        ...target,
        ref,
        per_page: PER_PAGE,
        page,
      });
      return { items: data.statuses, total: data.total_count };
    });
  }

  /** Every check run (the latest of each name), up to `MAX_CHECK_PAGES` pages. */
  async function readCheckRuns(target: { owner: string; repo: string }, ref: string) {
    return readPages(async (page) => {
      const { data } = await ctx.octokit.rest.checks.listForRef({ ...target, ref, per_page: PER_PAGE, page });
      return { items: data.check_runs, total: data.total_count };
    });
  }

  async function createCheckRun(input: CheckRunInput): Promise<void> {
    const summary = fitCheckOutput(input.summary);
    const [first = [], ...more] = inBatches(input.annotations);
    const { data } = await ctx.octokit.rest.checks.create({
      ...ctx.r,
      name: input.name,
      head_sha: input.headSha,
      status: "completed",
      conclusion: input.conclusion,
      output: { title: input.title, summary, annotations: first },
    });
    // GitHub takes 50 annotations a request; each update of the run adds the next 50.
    for (const annotations of more)
      await ctx.octokit.rest.checks.update({
        ...ctx.r,
        check_run_id: data.id,
        output: { title: input.title, summary, annotations },
      });
  }

  async function startCheckRun(name: string, headSha: string): Promise<number> {
    const { data } = await ctx.octokit.rest.checks.create({
      ...ctx.r,
      name,
      head_sha: headSha,
      status: "in_progress",
    });
    return data.id;
  }

  async function completeCheckRun(id: number, result: CheckRunResult): Promise<void> {
    await ctx.octokit.rest.checks.update({
      ...ctx.r,
      check_run_id: id,
      status: "completed",
      conclusion: result.conclusion,
      output: {
        title: result.title,
        summary: fitCheckOutput(result.summary),
        ...(result.text !== undefined ? { text: fitCheckOutput(result.text) } : {}),
      },
    });
  }

  async function tagCommit(repo: { owner: string; repo: string }, tag: string): Promise<string | undefined> {
    const ref = await orUndefinedOn404(ctx.octokit.rest.git.getRef({ ...repo, ref: `tags/${tag}` }));
    if (!ref) return undefined;
    if (ref.data.object.type !== "tag") return ref.data.object.sha;
    const annotated = await ctx.octokit.rest.git.getTag({ ...repo, tag_sha: ref.data.object.sha });
    return annotated.data.object.sha;
  }

  async function deploymentHealth(
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
  return {
    checksState,
    createCheckRun,
    startCheckRun,
    completeCheckRun,
    tagCommit,
    deploymentHealth,
    listDeploymentRecords,
  };
}
