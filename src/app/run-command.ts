import type { Permission } from "../core/config/schema.js";
import { isTransientError, UserError } from "../core/errors.js";
import { parseCommands, type Command } from "../core/pr/commands.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { boundReply, MAX_COMMANDS_PER_COMMENT, skippedCommandsLine } from "../core/pr/reply-bounds.js";
import { errorText } from "./error-text.js";
import { loadRepoConfig } from "./load-repo-config.js";
import { historyAnswer } from "./history-command.js";
import { promote, rollback } from "./promote.js";
import { statusTable, updateState, type StateWork } from "./state.js";
import type { GitHubAccess } from "./github-port.js";
import { notifyHeld } from "./notifications.js";

export interface CommentInput {
  commentId: number;
  issueNumber: number;
  /** The issue or PR the comment is on must be open (docs/reliability.md row 12: not on a closed or merged PR). */
  issueState: "open" | "closed";
  body: string;
  author: string;
  authorType: string;
  /** The webhook action: only `created` counts, never `edited`. */
  action: string;
  /** The repository's default branch, from the payload (saves a request). */
  defaultBranch?: string;
  /**
   * Commands of this comment to run (default and at most MAX_COMMANDS_PER_COMMENT; fewer when the
   * person's hourly budget has fewer left); the rest are answered with one line.
   */
  maxCommands?: number;
}

/** `failed`: GitHub or a registry failed for now; the commenter got 👎 and is asked to retry. */
export type CommentOutcome = "ignored" | "duplicate" | "done" | "refused" | "failed";

const RANK: Record<Permission | "none", number> = {
  none: 0,
  read: 1,
  triage: 2,
  write: 3,
  maintain: 4,
  admin: 5,
};

/**
 * `/promote`, `/rollback`, `/hold`, `/unhold`, `/ferry status` (docs/config.md "Commands"). Only newly created
 * comments by people count; each comment is handled once: the 👀 reaction is the dedupe key (a
 * redelivery finds it already there). The commenter's permission is checked live, never from
 * `author_association`.
 */
export async function runCommentCommands(deps: AppDeps, input: CommentInput): Promise<CommentOutcome> {
  if (input.action !== "created") return "ignored";
  if (input.authorType === "Bot" || input.author.endsWith("[bot]") || input.author === deps.appLogin)
    return "ignored";
  const parsed = parseCommands(input.body);
  if (parsed.length === 0) return "ignored";
  const commands = parsed.slice(
    0,
    Math.min(input.maxCommands ?? MAX_COMMANDS_PER_COMMENT, MAX_COMMANDS_PER_COMMENT),
  );
  if (commands.length === 0) return "ignored";
  if ((await deps.github.react(input.commentId, "eyes")) === "existed") return "duplicate";
  try {
    if (input.issueState !== "open")
      throw new UserError("closed", "commands are only taken on open issues and pull requests");
    const loaded = await loadRepoConfig(deps, input.defaultBranch);
    if (!loaded.ok)
      throw new UserError(
        "config",
        loaded.reason === "missing"
          ? "this repository has no .github/ferry.yml"
          : ".github/ferry.yml is invalid; fix it first",
      );
    const replies: string[] = [];
    for (const command of commands)
      replies.push(await runCommand(deps, loaded, command, input.author, input.issueNumber));
    if (commands.length < parsed.length)
      replies.push(
        skippedCommandsLine(
          commands.length,
          commands.length < Math.min(parsed.length, MAX_COMMANDS_PER_COMMENT) ? "hourly" : "per-comment",
        ),
      );
    await deps.github.react(input.commentId, "rocket");
    const text = boundReply(replies.filter((reply) => reply.length > 0).join("\n\n"));
    if (text) await deps.github.comment(input.issueNumber, text);
    return "done";
  } catch (error) {
    if (error instanceof UserError) {
      await deps.github.react(input.commentId, "-1");
      await deps.github.comment(
        input.issueNumber,
        boundReply(`@${input.author} ${errorText(error, deps.secrets)}`),
      );
      deps.log.info({ author: input.author, reason: error.code }, "command refused");
      return "refused";
    }
    // The 👀 already dedupes redeliveries, so this is the commenter's only answer: without it the
    // command would sit at 👀 for ever. A bug's own message stays in the log, never in the thread.
    const transient = isTransientError(error);
    await deps.github.react(input.commentId, "-1");
    await deps.github.comment(
      input.issueNumber,
      `@${input.author} Ferry could not finish this command: ${transient ? errorText(error, deps.secrets).replace(/\.$/, "") : "an unexpected error (see Ferry's log)"}. Try again in a while.`,
    );
    if (!transient) throw error;
    deps.log.warn({ author: input.author, error: errorText(error, deps.secrets) }, "command failed for now");
    return "failed";
  }
}

async function runCommand(
  deps: AppDeps,
  loaded: LoadedConfig,
  command: Command,
  author: string,
  issueNumber: number,
): Promise<string> {
  if (command.name === "status") {
    await authorize(deps, loaded, author, undefined);
    return statusTable(deps, loaded);
  }
  if (command.name === "history") {
    await authorize(deps, loaded, author, undefined);
    return historyAnswer(deps, loaded, command);
  }
  const environment = command.environment;
  if (!(environment in loaded.config.environments))
    throw new UserError("unknown-environment", `unknown environment ${environment}`);
  await authorize(deps, loaded, author, environment);
  switch (command.name) {
    case "promote":
      return promote(deps, loaded, {
        environment,
        ...(command.image ? { image: command.image } : {}),
        by: author,
        issueNumber,
      });
    case "rollback":
      return rollback(deps, loaded, {
        environment,
        ...(command.image ? { image: command.image } : {}),
        by: author,
        issueNumber,
      });
    case "hold": {
      let hold: { by: string; at: string } | undefined;
      await updateState(deps, loaded, (state) => {
        hold = state.holds[environment] ??= { by: author, at: deps.now().toISOString(), reason: "hold" };
      });
      if (hold) notifyHeld(deps, loaded.config, environment, hold);
      return `${environment} is on hold: automatic updates stop until \`/unhold ${environment}\`.`;
    }
    case "unhold":
      await updateState(deps, loaded, (state) => {
        delete state.holds[environment];
      });
      return `${environment} is no longer on hold: automatic updates resume with versions newer than what was held.`;
    case "unfloor":
      return unfloor(deps, loaded, environment, command.imageName);
  }
}

/**
 * `/unfloor <env> [image]`: forgets the floor (the tag automatic updates must stay above) of one
 * image or of every image of the environment, e.g. after a tag was published by mistake. Only a
 * command lowers a floor; it needs the same permission as `/promote <env>`.
 */
async function unfloor(
  deps: AppDeps<StateWork>,
  loaded: LoadedConfig,
  environment: string,
  image: string | undefined,
): Promise<string> {
  if (image !== undefined && !(image in loaded.config.images))
    throw new UserError("unknown-image", `unknown image ${image}`);
  let lowered: Record<string, string> = {};
  await updateState(deps, loaded, (state) => {
    const floors = state.floors[environment] ?? {};
    lowered = image === undefined ? { ...floors } : image in floors ? { [image]: floors[image]! } : {};
    if (image === undefined) delete state.floors[environment];
    else {
      delete floors[image];
      if (Object.keys(floors).length === 0) delete state.floors[environment];
    }
  });
  const names = Object.keys(lowered).sort();
  if (names.length === 0)
    return `${environment} has no floor${image !== undefined ? ` for ${image}` : ""}; nothing to lower.`;
  return names
    .map(
      (name) =>
        `The floor of ${name} in ${environment} (${lowered[name]}) is gone: automatic updates may propose any version the policy admits.`,
    )
    .join("\n");
}

/**
 * Live permission check (docs/reliability.md row 12): the collaborator permission API, or membership
 * of one of the environment's `promoters.teams`. `/ferry status` needs read access.
 */
async function authorize(
  deps: AppDeps<GitHubAccess>,
  loaded: LoadedConfig,
  login: string,
  environment: string | undefined,
): Promise<void> {
  const promoters = environment ? loaded.config.environments[environment]?.promoters : undefined;
  const needed: Permission = environment ? (promoters?.permission ?? "maintain") : "read";
  const permission = await deps.github.permissionOf(login);
  if (RANK[permission] >= RANK[needed]) return;
  for (const team of promoters?.teams ?? []) if (await deps.github.isTeamMember(team, login)) return;
  throw new UserError(
    "forbidden",
    environment
      ? `you need ${needed} permission${promoters?.teams.length ? ` or membership of ${promoters.teams.join(", ")}` : ""} to change ${environment}`
      : "you need read access to this repository",
  );
}
