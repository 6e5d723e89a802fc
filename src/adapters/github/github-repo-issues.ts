import type { GitHubIssues, IssueInfo } from "../../app/github-port.js";
import { type GitHubRepoContext, status } from "./github-repo-context.js";

/** The label on Ferry's issues (its PRs carry it too): `findIssue` reads only these. */
const FERRY_ISSUE_LABEL = "ferry";
/** Pages of 100 `ferry`-labelled issues and PRs read when looking for one by title (3,000 items). */
const MAX_ISSUE_PAGES = 30;

/** Ferry's issues: the `ferry`-labelled dashboard and broken-config issue, found, written and pinned (`GitHubIssues`). */
export function issuesOf(ctx: GitHubRepoContext): Required<GitHubIssues> {
  return {
    findIssue: (title) => findIssue(ctx, title),
    getIssue: (number) => getIssue(ctx, number),
    createIssue: (input) => createIssue(ctx, input),
    updateIssue: (number, input) => updateIssue(ctx, number, input),
    pinIssue: (number) => pinIssue(ctx, number),
  };
}

async function findIssue(ctx: GitHubRepoContext, title: string): Promise<IssueInfo | undefined> {
  // Closed ones too: a dashboard someone closed still holds the holds and floors, and is reopened
  // rather than replaced by an empty one (which would silently lift every hold). Ferry's PRs carry
  // the label too, so every page is read: the one page of 100 newest items used to miss the
  // dashboard after ~100 PRs and a duplicate was created. Bounded (docs/reliability.md).
  const matches: { number: number; title: string; body?: string | null; state: string }[] = [];
  let pages = 0;
  for await (const { data } of ctx.octokit.paginate.iterator(ctx.octokit.rest.issues.listForRepo, {
    ...ctx.r,
    labels: FERRY_ISSUE_LABEL,
    state: "all",
    per_page: 100,
  })) {
    for (const candidate of data)
      if (!candidate.pull_request && candidate.title === title) matches.push(candidate);
    if (++pages >= MAX_ISSUE_PAGES) break;
  }
  // The oldest open one: replicas that raced to create a dashboard all settle on the same issue.
  const byNumber = matches.sort((a, b) => a.number - b.number);
  const issue = byNumber.find((candidate) => candidate.state === "open") ?? byNumber[0];
  return issue
    ? {
        number: issue.number,
        title: issue.title,
        body: issue.body ?? "",
        state: issue.state === "open" ? "open" : "closed",
      }
    : undefined;
}

async function getIssue(
  ctx: GitHubRepoContext,
  number: number,
): Promise<(IssueInfo & { author: string }) | undefined> {
  let response;
  try {
    response = await ctx.octokit.rest.issues.get({ ...ctx.r, issue_number: number });
  } catch (error) {
    // 404, or 410 when the issue was deleted or issues were turned off: the same as absent.
    if (status(error) === 404 || status(error) === 410) return undefined;
    throw error;
  }
  if (response.data.pull_request) return undefined;
  const { data } = response;
  return {
    number: data.number,
    title: data.title,
    body: data.body ?? "",
    state: data.state === "open" ? "open" : "closed",
    author: data.user?.login ?? "",
  };
}

async function createIssue(
  ctx: GitHubRepoContext,
  input: { title: string; body: string },
): Promise<number | undefined> {
  try {
    const { data } = await ctx.octokit.rest.issues.create({
      ...ctx.r,
      ...input,
      labels: [FERRY_ISSUE_LABEL],
    });
    return data.number;
  } catch (error) {
    // 410 "Issues are disabled for this repo" (https://github.com/ossf/allstar/issues/64).
    if (status(error) === 410) return undefined;
    throw error;
  }
}

async function updateIssue(
  ctx: GitHubRepoContext,
  number: number,
  input: { body?: string; state?: "open" | "closed" },
): Promise<void> {
  await ctx.octokit.rest.issues.update({ ...ctx.r, issue_number: number, ...input });
}

async function pinIssue(ctx: GitHubRepoContext, number: number): Promise<void> {
  const { data } = await ctx.octokit.rest.issues.get({ ...ctx.r, issue_number: number });
  await ctx.octokit.graphql(`mutation($id: ID!) { pinIssue(input: { issueId: $id }) { clientMutationId } }`, {
    id: data.node_id,
  });
}
