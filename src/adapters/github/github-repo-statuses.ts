import type { GitHubStatuses, PullRequestInfo } from "../../app/github-port.js";
import type { GitHubRepoContext } from "./github-repo-context.js";
import { toPull } from "./github-repo-pulls.js";

/** GitHub lists at most 100 PRs or files a page. */
const PER_PAGE = 100;

/**
 * Ferry's commit statuses (`ferry/window`) and the open PRs they go on (`GitHubStatuses`):
 * https://docs.github.com/en/rest/commits/statuses#create-a-commit-status,
 * https://docs.github.com/en/rest/pulls/pulls#list-pull-requests and
 * https://docs.github.com/en/rest/pulls/pulls#list-pull-requests-files.
 */
export function statusesOf(ctx: GitHubRepoContext): Required<GitHubStatuses> {
  async function postStatus(
    sha: string,
    input: { context: string; state: "success" | "failure" | "pending"; description: string },
  ): Promise<void> {
    await ctx.octokit.rest.repos.createCommitStatus({
      ...ctx.r,
      sha,
      state: input.state,
      context: input.context,
      description: input.description.slice(0, 140),
    });
  }

  async function listOpenPulls(limit: number): Promise<PullRequestInfo[]> {
    const pulls: PullRequestInfo[] = [];
    for (let page = 1; pulls.length < limit; page++) {
      const { data } = await ctx.octokit.rest.pulls.list({
        ...ctx.r,
        state: "open",
        sort: "updated",
        direction: "desc",
        per_page: PER_PAGE,
        page,
      });
      pulls.push(...data.map(toPull));
      if (data.length < PER_PAGE) break;
    }
    return pulls.slice(0, limit);
  }

  async function listPullFiles(number: number, limit: number): Promise<{ files: string[]; cut: boolean }> {
    const files: string[] = [];
    let read = 0;
    for (let page = 1; read < limit; page++) {
      const { data } = await ctx.octokit.rest.pulls.listFiles({
        ...ctx.r,
        pull_number: number,
        per_page: PER_PAGE,
        page,
      });
      read += data.length;
      for (const file of data)
        files.push(file.filename, ...(file.previous_filename ? [file.previous_filename] : []));
      if (data.length < PER_PAGE) return { files, cut: false };
    }
    return { files, cut: true };
  }

  return { postStatus, listOpenPulls, listPullFiles };
}
