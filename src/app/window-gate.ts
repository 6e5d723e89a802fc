import { notifyBlocked } from "./notifications.js";
import type { Permission } from "../core/config/schema.js";
import { UserError } from "../core/errors.js";
import { parseStateFile } from "../core/state/ferry-state.js";
import { overrideFor, recordOverride, type WindowOverride } from "../core/state/window-state.js";
import { evaluateWindows, type WindowVerdict } from "../core/windows/evaluate-windows.js";
import { closedLine, overrideLine, WINDOW_STATUS_CONTEXT } from "../core/windows/window-text.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { STATE_FILE, STATE_REF, type GitHubAccess, type GitHubContents } from "./github-port.js";
import type { GitHubPulls, GitHubStatuses, PullRequestInfo, RepoIdentity } from "./github-port.js";
import type { StateWork } from "./dashboard-issue.js";
import { updateState } from "./update-state.js";

/**
 * What a change window or freeze stops (docs/config.md "Change windows and freezes"): Ferry
 * never merges (nor arms native auto-merge for) a PR into a closed environment, and `/promote`
 * and `/rollback` are refused there unless run with `--override-freeze "reason"` by the
 * environment's `overrideFreeze` role, which is recorded for the commit it lets through.
 */

const RANK: Record<Permission | "none", number> = {
  none: 0,
  read: 1,
  triage: 2,
  write: 3,
  maintain: 4,
  admin: 5,
};

export function windowVerdict(
  deps: Pick<AppDeps, "now">,
  loaded: LoadedConfig,
  environment: string,
): WindowVerdict {
  return evaluateWindows(loaded.config.environments[environment], deps.now());
}

/** The override recorded for this head, read from the state ref (one request, only when closed). */
export async function recordedOverride(
  deps: AppDeps<GitHubContents>,
  environment: string,
  sha: string,
): Promise<WindowOverride | undefined> {
  const state = parseStateFile(await deps.github.readFile(STATE_REF, STATE_FILE));
  return overrideFor(state.windows, environment, sha);
}

/** Whether Ferry may merge its PR at `headSha` into `environment` now: open, or overridden for that head. */
export async function mayMergeNow(
  deps: AppDeps<GitHubContents & RepoIdentity & Pick<GitHubPulls, "listReviews">>,
  loaded: LoadedConfig,
  environment: string,
  headSha: string,
): Promise<boolean> {
  const verdict = windowVerdict(deps, loaded, environment);
  if (verdict.open) return true;
  if (await recordedOverride(deps, environment, headSha)) return true;
  const closed = closedLine(environment, verdict);
  deps.log.info({ environment, reason: closed }, "not merged: the environment is closed");
  // Once per held head: every later event and replica seeing the same head is the same block.
  notifyBlocked(deps, loaded.config, { environment, reason: "window", detail: closed, occurrence: headSha });
  return false;
}

/**
 * Before `/promote` or `/rollback`: nothing when the environment is open; when closed, the
 * override to record (its role checked live), else a one-line refusal naming the window or freeze.
 */
export async function commandWindowGate(
  deps: AppDeps<GitHubAccess>,
  loaded: LoadedConfig,
  input: { environment: string; command: "promote" | "rollback"; by: string; overrideFreeze?: string },
): Promise<{ reason: string; closed: string } | undefined> {
  const { environment } = input;
  const verdict = windowVerdict(deps, loaded, environment);
  if (verdict.open) return undefined;
  const closed = closedLine(environment, verdict);
  if (input.overrideFreeze === undefined)
    throw new UserError(
      "window-closed",
      `${closed}. Only ${roleText(loaded, environment)} may override: /${input.command} ${environment} --override-freeze "reason"`,
    );
  if (!(await inOverrideRole(deps, loaded, environment, input.by)))
    throw new UserError("forbidden", `${closed}, and only ${roleText(loaded, environment)} may override it`);
  return { reason: input.overrideFreeze, closed };
}

function roleText(loaded: LoadedConfig, environment: string): string {
  const role = loaded.config.environments[environment]?.overrideFreeze;
  const who = [
    ...(role?.users ?? []).map((user) => `@${user}`),
    ...(role?.teams ?? []).map((team) => `@${team}`),
    ...(role?.permission ? [`${role.permission} permission`] : []),
  ];
  return who.length > 0 ? who.join(", ") : "nobody (set overrideFreeze)";
}

async function inOverrideRole(
  deps: AppDeps<GitHubAccess>,
  loaded: LoadedConfig,
  environment: string,
  login: string,
): Promise<boolean> {
  const role = loaded.config.environments[environment]?.overrideFreeze;
  if (!role) return false;
  if (role.users.some((user) => user.toLowerCase() === login.toLowerCase())) return true;
  if (role.permission !== undefined && RANK[await deps.github.permissionOf(login)] >= RANK[role.permission])
    return true;
  for (const team of role.teams) if (await deps.github.isTeamMember(team, login)) return true;
  return false;
}

/**
 * Records an override for the promotion PR's head (state ref: who, when, why, which commit) and
 * marks that head `ferry/window` success with the override in its description. Returns the reply line.
 */
export async function recordWindowOverride(
  deps: AppDeps<StateWork & GitHubStatuses>,
  loaded: LoadedConfig,
  input: {
    environment: string;
    command: "promote" | "rollback";
    by: string;
    gate: { reason: string; closed: string };
    pull: PullRequestInfo;
  },
): Promise<string> {
  const override: WindowOverride = {
    by: input.by,
    at: deps.now().toISOString(),
    reason: input.gate.reason,
    sha: input.pull.headSha,
    pull: input.pull.number,
    command: input.command,
  };
  await deps.locks.run(windowStatusLock(deps, input.pull.headSha), async () => {
    await updateState(deps, loaded, (state) => {
      state.windows = recordOverride(state.windows, input.environment, { ...override });
    });
    await deps.github.postStatus?.(input.pull.headSha, {
      context: WINDOW_STATUS_CONTEXT,
      state: "success",
      description: overrideLine(input.environment, override),
    });
  });
  deps.log.info(
    { environment: input.environment, by: input.by, pull: input.pull.number },
    "window override recorded",
  );
  return `Override recorded: ${input.gate.closed}; @${input.by} lets #${input.pull.number} through at ${input.pull.headSha.slice(0, 12)} ("${input.gate.reason}").`;
}

/** Serializes the statuses written on one commit in this process (an override and an event's repost). */
export function windowStatusLock(deps: AppDeps<{ owner: string; repo: string }>, sha: string): string {
  return `${deps.github.owner}/${deps.github.repo}#window@${sha}`;
}

/**
 * After `/promote` or `/rollback` wrote its PR: records the command's override for the PR's head,
 * if it passed one, and adds that to the reply. A promotion that wrote nothing records nothing.
 */
export async function withWindowOverride(
  deps: AppDeps<StateWork & GitHubStatuses>,
  loaded: LoadedConfig,
  input: { environment: string; by: string; override?: { reason: string; closed: string } },
  command: "promote" | "rollback",
  upsert: { action: string; pull?: PullRequestInfo },
  answer: string,
): Promise<string> {
  if (!input.override || !upsert.pull || !["opened", "updated", "unchanged"].includes(upsert.action))
    return answer;
  const line = await recordWindowOverride(deps, loaded, {
    environment: input.environment,
    command,
    by: input.by,
    gate: input.override,
    pull: upsert.pull,
  });
  return answer ? `${answer}\n\n${line}` : line;
}
