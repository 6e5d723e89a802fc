import type { CommitHealthQuery, DeploymentHealth, GitHubDeployments } from "../../app/github-port.js";
import { isReporter } from "../../core/health/health-reporters.js";
import {
  checkRunState,
  contextMatches,
  latestRun,
  type HealthReport,
} from "../../core/health/health-source.js";
import type { GitHubRepoContext } from "./github-repo-context.js";

/** GitHub lists at most 100 statuses or check runs a page; one page a commit is read. */
const PER_PAGE = 100;
/** At most this many of the branch's newest commits are searched for a report. */
export const MAX_HEALTH_COMMITS = 30;

/**
 * Health that an engine other than Ferry's reconciler writes on the config commits it applied
 * (docs/config.md "Health"): commit statuses (Argo CD Notifications, Flux notification-controller,
 * any named context) or check runs, counted only from the identity the config names.
 */
export function healthOf(ctx: GitHubRepoContext): Required<Pick<GitHubDeployments, "commitHealth">> {
  async function reportsOn(sha: string, query: CommitHealthQuery): Promise<HealthReport[]> {
    const { source } = query;
    if (source.kind === "statuses") {
      // Newest first (GitHub's order); anyone who can push may post a status: only reporters count.
      const { data } = await ctx.octokit.rest.repos.listCommitStatusesForRef({
        ...ctx.r,
        ref: sha,
        per_page: PER_PAGE,
      });
      return data
        .filter(
          (status) =>
            isReporter(source.reporters, status.creator?.login) &&
            contextMatches(source.context, status.context),
        )
        .map((status) => ({
          state: status.state as HealthReport["state"],
          at: new Date(status.created_at),
          ...(status.description ? { description: status.description } : {}),
        }));
    }
    const { data } = await ctx.octokit.rest.checks.listForRef({
      ...ctx.r,
      ref: sha,
      check_name: source.name,
      filter: "all",
      per_page: PER_PAGE,
    });
    const reports: HealthReport[] = [];
    for (const run of data.check_runs) {
      // The app that created the run, never its name: any app with checks: write may use any name.
      if (run.app?.id !== source.appId) continue;
      const state = checkRunState(run.status, run.conclusion);
      const at = run.completed_at ?? run.started_at;
      if (state === undefined || !at) continue;
      reports.push({
        state,
        at: new Date(at),
        ...(run.output?.title ? { description: run.output.title } : {}),
      });
    }
    return reports.sort((a, b) => b.at.getTime() - a.at.getTime());
  }

  async function commitHealth(query: CommitHealthQuery): Promise<DeploymentHealth | undefined> {
    const { data: commits } = await ctx.octokit.rest.repos.listCommits({
      ...ctx.r,
      sha: query.branch,
      per_page: Math.min(MAX_HEALTH_COMMITS, Math.max(1, query.commits)),
    });
    // Newest commit first: the engine reports on the revision it applied, the branch head or one before it.
    for (const commit of commits) {
      const run = latestRun(await reportsOn(commit.sha, query));
      if (run === undefined) continue;
      const health: DeploymentHealth = { sha: commit.sha, state: run.state, since: run.since };
      if (run.description !== undefined) health.description = run.description;
      return health;
    }
    return undefined;
  }
  return { commitHealth };
}
