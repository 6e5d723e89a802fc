import type { GitHubPulls, PullRequestInfo } from "../../app/github-port.js";
import { type GitHubRepoContext, message, orUndefinedOn404, status } from "./github-repo-context.js";

/** Pull request data from the REST shape. */
export function toPull(data: {
  number: number;
  node_id: string;
  state: string;
  merged?: boolean | null;
  merged_at?: string | null;
  head: { ref: string; sha: string; repo?: { full_name: string } | null };
  base: { ref: string };
  title: string;
  body?: string | null;
  labels?: ({ name?: string } | string)[];
  auto_merge?: unknown;
  user?: { login: string } | null;
  mergeable?: boolean | null;
  mergeable_state?: string;
}): PullRequestInfo {
  return {
    author: data.user?.login ?? "",
    ...(data.head.repo ? { headRepo: data.head.repo.full_name } : {}),
    number: data.number,
    nodeId: data.node_id,
    state: data.state === "open" ? "open" : "closed",
    merged: data.merged === true || Boolean(data.merged_at),
    headRef: data.head.ref,
    headSha: data.head.sha,
    baseRef: data.base.ref,
    title: data.title,
    body: data.body ?? "",
    labels: (data.labels ?? []).map((label) => (typeof label === "string" ? label : (label.name ?? ""))),
    autoMerge: data.auto_merge !== undefined && data.auto_merge !== null,
    ...(data.mergeable !== undefined ? { mergeable: data.mergeable } : {}),
    ...(data.mergeable_state !== undefined ? { mergeableState: data.mergeable_state } : {}),
  };
}

/** Pull requests: Ferry's PR for a unit, read, opened, updated, labelled and sent for review (`GitHubPulls`). */
export function pullsOf(ctx: GitHubRepoContext): Required<GitHubPulls> {
  return {
    findOpenPull: (head) => findOpenPull(ctx, head),
    getPull: (number) => getPull(ctx, number),
    createPull: (input) => createPull(ctx, input),
    updatePull: (number, input) => updatePull(ctx, number, input),
    addLabels: (number, labels) => addLabels(ctx, number, labels),
    requestReviewers: (number, users, teams) => requestReviewers(ctx, number, users, teams),
    listReviews: (number) => listReviews(ctx, number),
    listChangedFiles: (number) => listChangedFiles(ctx, number),
  };
}

async function findOpenPull(ctx: GitHubRepoContext, head: string): Promise<PullRequestInfo | undefined> {
  const { data } = await ctx.octokit.rest.pulls.list({
    ...ctx.r,
    head: `${ctx.owner}:${head}`,
    state: "open",
    per_page: 5,
  });
  const pull = data.find((candidate) => candidate.head.ref === head);
  return pull ? toPull(pull) : undefined;
}

async function getPull(ctx: GitHubRepoContext, number: number): Promise<PullRequestInfo | undefined> {
  const response = await orUndefinedOn404(ctx.octokit.rest.pulls.get({ ...ctx.r, pull_number: number }));
  return response ? toPull(response.data) : undefined;
}

async function createPull(
  ctx: GitHubRepoContext,
  input: {
    head: string;
    base: string;
    title: string;
    body: string;
  },
): Promise<PullRequestInfo> {
  const { data } = await ctx.octokit.rest.pulls.create({
    ...ctx.r,
    ...input,
    maintainer_can_modify: false,
  });
  return toPull(data);
}

async function updatePull(
  ctx: GitHubRepoContext,
  number: number,
  input: { title?: string; body?: string; state?: "open" | "closed" },
): Promise<void> {
  await ctx.octokit.rest.pulls.update({ ...ctx.r, pull_number: number, ...input });
}

async function addLabels(ctx: GitHubRepoContext, number: number, labels: string[]): Promise<void> {
  await ctx.octokit.rest.issues.addLabels({ ...ctx.r, issue_number: number, labels });
}

async function requestReviewers(
  ctx: GitHubRepoContext,
  number: number,
  users: string[],
  teams: string[],
): Promise<void | "refused"> {
  try {
    await ctx.octokit.rest.pulls.requestReviewers({
      ...ctx.r,
      pull_number: number,
      reviewers: users,
      team_reviewers: teams.map((team) => team.split("/").pop()!),
    });
  } catch (error) {
    // "Reviews may only be requested from collaborators. One or more of the users or teams you
    // specified is not a collaborator of the … repository." (422, after the PR was created:
    // https://github.com/projectcontour/contour/pull/5998).
    if (status(error) === 422 && /only be requested from collaborators/i.test(message(error)))
      return "refused";
    throw error;
  }
}

async function listReviews(
  ctx: GitHubRepoContext,
  number: number,
): Promise<{ state: string; commitId: string | null; user?: string }[]> {
  const { data } = await ctx.octokit.rest.pulls.listReviews({
    ...ctx.r,
    pull_number: number,
    per_page: 100,
  });
  return data.map((review) => ({
    state: review.state,
    commitId: review.commit_id ?? null,
    ...(review.user?.login ? { user: review.user.login } : {}),
  }));
}

// Every page (https://docs.github.com/en/rest/pulls/pulls#list-pull-requests-files).
function listChangedFiles(
  ctx: GitHubRepoContext,
  number: number,
): Promise<{ filename: string; previous_filename?: string }[]> {
  return ctx.octokit.paginate(ctx.octokit.rest.pulls.listFiles, {
    ...ctx.r,
    pull_number: number,
    per_page: 100,
  });
}
