import { fitBody } from "../../core/pr/github-limits.js";
import type { GitHubComments, ReactionContent } from "../../app/github-port.js";
import type { GitHubRepoContext } from "./github-repo-context.js";

/** Comments and reactions on an issue or PR: Ferry's answers, and the 👀 that dedupes a command (`GitHubComments`). */
export function commentsOf(ctx: GitHubRepoContext): Required<GitHubComments> {
  return {
    comment: (issueNumber, body) => comment(ctx, issueNumber, body),
    react: (commentId, content) => react(ctx, commentId, content),
  };
}

async function comment(ctx: GitHubRepoContext, issueNumber: number, body: string): Promise<void> {
  // A `/ferry status` answer for a big config can pass GitHub's body limit: cut it rather than lose it.
  const fitted = fitBody(body, "", "The dashboard issue and `ferry plan` show the rest.") ?? body;
  await ctx.octokit.rest.issues.createComment({ ...ctx.r, issue_number: issueNumber, body: fitted });
}

async function react(
  ctx: GitHubRepoContext,
  commentId: number,
  content: ReactionContent,
): Promise<"created" | "existed"> {
  // GitHub answers 200 when this app already reacted so, 201 when it is new: an atomic dedupe key.
  const response = await ctx.octokit.rest.reactions.createForIssueComment({
    ...ctx.r,
    comment_id: commentId,
    content,
  });
  return (response.status as number) === 200 ? "existed" : "created";
}
