import type { Permission } from "../core/config/schema.js";
import { isTransientError, UserError } from "../core/errors.js";
import { parseCommands, type Command } from "../core/pr/commands.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { boundReply, MAX_COMMANDS_PER_COMMENT, skippedCommandsLine } from "../core/pr/reply-bounds.js";
import { errorText } from "./error-text.js";
import { loadRepoConfig } from "./load-repo-config.js";
import { historyAnswer } from "./history-command.js";
import { whyAnswer } from "./why-command.js";
import { promote, rollback } from "./promote.js";
import type { StateWork } from "./dashboard-issue.js";
import { statusTable } from "./status-table.js";
import { updateState } from "./update-state.js";
import type { GitHubAccess } from "./github-port.js";
import { commandWindowGate } from "./window-gate.js";
import { authorizeImages } from "./authorize-images.js";
import { commandUnit } from "./command-unit.js";
import { describeUnit } from "../core/pr/branch.js";
import { setUnitHold, unitHold } from "../core/state/ferry-state.js";
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
  /** The comment is on a pull request (then a command on a unit's PR acts on that unit: command-unit.ts). */
  isPullRequest?: boolean;
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
      replies.push(
        await runCommand(deps, loaded, command, input.author, input.issueNumber, input.isPullRequest),
      );
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
  isPullRequest?: boolean,
): Promise<string> {
  if (command.name === "status") {
    await authorize(deps, loaded, author, undefined);
    return statusTable(deps, loaded);
  }
  if (command.name === "history") {
    await authorize(deps, loaded, author, undefined);
    return historyAnswer(deps, loaded, command);
  }
  if (command.name === "why") {
    await authorize(deps, loaded, author, undefined);
    return whyAnswer(deps, loaded, command);
  }
  const environment = command.environment;
  if (!(environment in loaded.config.environments))
    throw new UserError("unknown-environment", `unknown environment ${environment}`);
  const permission = await authorize(deps, loaded, author, environment);
  const unit =
    command.name === "unfloor"
      ? undefined
      : await commandUnit(deps, loaded, environment, issueNumber, isPullRequest);
  // Each image touched must admit the actor too (docs/config.md "Who may promote what"): a named
  // image before any work, otherwise what the command is about to change, before it writes. On a
  // group's PR, a hold touches that group's images only.
  const allow = (images: string[] | "environment") =>
    authorizeImages(deps, loaded, { login: author, permission, environment, images, verb: command.name });
  if ("image" in command && command.image) await allow([command.image.name]);
  else if (command.name === "unfloor") await allow(command.imageName ? [command.imageName] : "environment");
  else if (command.name === "hold" || command.name === "unhold")
    await allow(unit ? unit.images : "environment");
  // Refused in a closed environment unless overridden by the role (docs/config.md "Change windows and freezes").
  const override =
    command.name === "promote" || command.name === "rollback"
      ? await commandWindowGate(deps, loaded, {
          environment,
          command: command.name,
          by: author,
          ...(command.overrideFreeze !== undefined ? { overrideFreeze: command.overrideFreeze } : {}),
        })
      : undefined;
  const scope = {
    ...(unit ? { unit } : {}),
    environment,
    by: author,
    issueNumber,
    ...(override ? { override } : {}),
  };
  const what = unit ? describeUnit(unit) : environment;
  switch (command.name) {
    case "promote":
      return promote(deps, loaded, { ...scope, ...(command.image ? { image: command.image } : { allow }) });
    case "rollback":
      return rollback(deps, loaded, { ...scope, ...(command.image ? { image: command.image } : { allow }) });
    case "hold": {
      const hold = { by: author, at: deps.now().toISOString(), reason: "hold" as const };
      let held = false;
      await updateState(deps, loaded, (state) => {
        // Told once: a hold that was already there is not a new event.
        held = unitHold(state, environment, unit?.group) === undefined;
        setUnitHold(state, environment, unit?.group, hold);
      });
      if (held) notifyHeld(deps, loaded.config, environment, hold);
      return `${what} is on hold: automatic updates stop until \`/unhold ${environment}\`.`;
    }
    case "unhold": {
      let still = false;
      await updateState(deps, loaded, (state) => {
        setUnitHold(state, environment, unit?.group, undefined);
        still = unit !== undefined && environment in state.holds;
      });
      return still
        ? `${what} is no longer on hold itself, but all of ${environment} still is: \`/unhold ${environment}\` on an issue releases it.`
        : `${what} is no longer on hold: automatic updates resume with versions newer than what was held.`;
    }
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
 * of one of the environment's `promoters.teams`. `/ferry status` needs read access. Returns the
 * permission read, for the images' own rules (authorize-images.ts).
 */
async function authorize(
  deps: AppDeps<GitHubAccess>,
  loaded: LoadedConfig,
  login: string,
  environment: string | undefined,
): Promise<Permission | "none"> {
  const promoters = environment ? loaded.config.environments[environment]?.promoters : undefined;
  const needed: Permission = environment ? (promoters?.permission ?? "maintain") : "read";
  const permission = await deps.github.permissionOf(login);
  if (RANK[permission] >= RANK[needed]) return permission;
  for (const team of promoters?.teams ?? [])
    if (await deps.github.isTeamMember(team, login)) return permission;
  throw new UserError(
    "forbidden",
    environment
      ? `you need ${needed} permission${promoters?.teams.length ? ` or membership of ${promoters.teams.join(", ")}` : ""} to change ${environment}`
      : "you need read access to this repository",
  );
}
