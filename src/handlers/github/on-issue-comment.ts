import { runCommentCommands } from "../../app/run-command.js";
import { parseCommands } from "../../core/pr/commands.js";
import { MAX_COMMANDS_PER_COMMENT } from "../../core/pr/reply-bounds.js";
import { type HandlerEvent, type HandlerServices, type RepositoryPayload, repoOf } from "./services.js";

interface CommentPayload extends RepositoryPayload {
  action: string;
  comment: { id: number; body: string; user: { login: string; type: string } };
  issue: { number: number; state: string; pull_request?: unknown };
}

/**
 * issue_comment: commands, `created` only (the use case checks the action and the author again).
 * A comment without a command costs nothing; one with commands is admitted by the flood guard
 * first (each of its commands, at most MAX_COMMANDS_PER_COMMENT, spends one of the person's
 * hourly commands), so that nobody can spend the installation's API budget or flood a thread.
 */
export async function onIssueComment(
  event: HandlerEvent<CommentPayload>,
  services: HandlerServices,
): Promise<void> {
  const { payload } = event;
  if (payload.action !== "created" || payload.comment.user.type === "Bot") return;
  const body = payload.comment.body ?? "";
  const commands = parseCommands(body).length;
  if (commands === 0) return;
  const { owner, repo } = repoOf(payload);
  const repository = `${owner}/${repo}`;
  const author = payload.comment.user.login;
  // Every command a comment would run counts, whatever it does and however it ends.
  const decision = services.commandGuard.admit(
    repository,
    author,
    Math.min(commands, MAX_COMMANDS_PER_COMMENT),
  );
  if (decision.kind === "ignore") return;
  if (decision.kind === "warn") {
    services.queue.enqueue(`command-flood:${repository}:${author}`, () =>
      services
        .depsFor(event.octokit, owner, repo)
        .github.comment(
          payload.issue.number,
          `@${author} too many commands: further commands from you in ${repository} are ignored for ${decision.minutes} minutes.`,
        ),
    );
    return;
  }
  services.queue.enqueue(`comment:${repository}#${payload.comment.id}`, async () => {
    const outcome = await runCommentCommands(services.depsFor(event.octokit, owner, repo), {
      action: payload.action,
      commentId: payload.comment.id,
      issueNumber: payload.issue.number,
      issueState: payload.issue.state === "open" ? "open" : "closed",
      body,
      author,
      authorType: payload.comment.user.type,
      maxCommands: decision.commands,
      isPullRequest: payload.issue.pull_request !== undefined && payload.issue.pull_request !== null,
      ...(payload.repository.default_branch ? { defaultBranch: payload.repository.default_branch } : {}),
    });
    // Only refusals count against the comment burst; every command counts for the hour either way.
    if (outcome !== "refused") services.commandGuard.refund(repository, author);
  });
}
