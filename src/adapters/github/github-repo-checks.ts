import type { CheckRunInput, CheckRunResult, ChecksState, GitHubChecks } from "../../app/github-port.js";
import { fitCheckOutput, inBatches } from "../../core/pr/github-limits.js";
import { type GitHubRepoContext, orUndefinedOn404 } from "./github-repo-context.js";

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
 * Checks: a commit's CI state (here or in an image's source repository), Ferry's own check runs,
 * and the commit a source repository's tag names (`GitHubChecks`).
 */
export function checksOf(ctx: GitHubRepoContext): Required<GitHubChecks> {
  return {
    checksState: (sha, contexts, repo) => checksState(ctx, sha, contexts, repo),
    createCheckRun: (input) => createCheckRun(ctx, input),
    startCheckRun: (name, headSha) => startCheckRun(ctx, name, headSha),
    completeCheckRun: (id, result) => completeCheckRun(ctx, id, result),
    tagCommit: (repo, tag) => tagCommit(ctx, repo, tag),
  };
}

async function checksState(
  ctx: GitHubRepoContext,
  sha: string,
  contexts?: string[],
  repo?: { owner: string; repo: string },
): Promise<ChecksState | "none"> {
  const target = repo ?? ctx.r;
  const [statuses, runs] = await Promise.all([
    readStatuses(ctx, target, sha),
    readCheckRuns(ctx, target, sha),
  ]);
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
async function readStatuses(ctx: GitHubRepoContext, target: { owner: string; repo: string }, ref: string) {
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
async function readCheckRuns(ctx: GitHubRepoContext, target: { owner: string; repo: string }, ref: string) {
  return readPages(async (page) => {
    const { data } = await ctx.octokit.rest.checks.listForRef({ ...target, ref, per_page: PER_PAGE, page });
    return { items: data.check_runs, total: data.total_count };
  });
}

async function createCheckRun(ctx: GitHubRepoContext, input: CheckRunInput): Promise<void> {
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

async function startCheckRun(ctx: GitHubRepoContext, name: string, headSha: string): Promise<number> {
  const { data } = await ctx.octokit.rest.checks.create({
    ...ctx.r,
    name,
    head_sha: headSha,
    status: "in_progress",
  });
  return data.id;
}

async function completeCheckRun(ctx: GitHubRepoContext, id: number, result: CheckRunResult): Promise<void> {
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

async function tagCommit(
  ctx: GitHubRepoContext,
  repo: { owner: string; repo: string },
  tag: string,
): Promise<string | undefined> {
  const ref = await orUndefinedOn404(ctx.octokit.rest.git.getRef({ ...repo, ref: `tags/${tag}` }));
  if (!ref) return undefined;
  if (ref.data.object.type !== "tag") return ref.data.object.sha;
  const annotated = await ctx.octokit.rest.git.getTag({ ...repo, tag_sha: ref.data.object.sha });
  return annotated.data.object.sha;
}
