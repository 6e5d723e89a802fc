import { UserError } from "../core/errors.js";
import {
  DEFAULT_HISTORY_COMMITS,
  formatHistory,
  parseHistoryDate,
  type HistoryQuery,
} from "../core/history/history.js";
import type { HistoryCommit } from "../core/history/history-entry.js";
import {
  appliedCommits,
  MAX_DEPLOYMENT_STATUSES,
  MAX_DEPLOYMENTS,
  versionsAtChange,
} from "../core/history/deployments.js";
import type { ReportedDeployments } from "../core/history/history.js";
import type { EnvironmentHistory, ImageVersion } from "../core/history/history-entry.js";
import type { FerryConfig } from "../core/config/schema.js";
import type { Command } from "../core/pr/commands.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { environmentHistory, versionsAtCommit, type HistorySource } from "./environment-history.js";
import { repoFileSource } from "./repo-files.js";
import { healthSourceOf } from "../core/health/health-source.js";

/**
 * `/ferry history <env> [image] [--since DATE | --at DATE]`: the environment's history from the
 * config repository's commits on the default branch, read through the GitHub API (one commit
 * list per path, one tree per commit; blobs cached by SHA), at most `history.maxCommits` commits.
 */
export async function historyAnswer(
  deps: AppDeps,
  loaded: LoadedConfig,
  command: Extract<Command, { name: "history" }>,
): Promise<string> {
  const { config } = loaded;
  if (!(command.environment in config.environments))
    throw new UserError("unknown-environment", `unknown environment ${command.environment}`);
  if (command.imageName !== undefined && !(command.imageName in config.images))
    throw new UserError("unknown-image", `unknown image ${command.imageName}`);
  const source = apiHistorySource(deps);
  if (source === undefined) throw new UserError("unsupported", "history is not available here");
  const history = await environmentHistory(source, config, command.environment, {
    maxCommits: config.history?.maxCommits ?? DEFAULT_HISTORY_COMMITS,
  });
  const query: HistoryQuery = {};
  if (command.imageName !== undefined) query.image = command.imageName;
  if (command.since !== undefined) query.since = parseHistoryDate(command.since)!;
  if (command.at !== undefined) query.at = parseHistoryDate(command.at)!;
  const base = `${deps.webUrl.replace(/\/+$/, "")}/${deps.github.owner}/${deps.github.repo}`;
  const deployments = await reportedDeployments(deps, source, config, command.environment, history);
  return formatHistory(history, query, {
    markdown: true,
    links: { commit: (sha) => `${base}/commit/${sha}`, pull: (number) => `${base}/pull/${number}` },
    ...(deployments !== undefined ? { deployments } : {}),
  });
}

/**
 * What the environment's reconciler reported through Deployment statuses (bounded by
 * MAX_DEPLOYMENTS and MAX_DEPLOYMENT_STATUSES), with what each applied commit ran: from the
 * history when the commit is one of its changes, else from the commit's own files (a commit that
 * touched other paths). Undefined when the port cannot list Deployments.
 */
async function reportedDeployments(
  deps: AppDeps,
  source: HistorySource,
  config: FerryConfig,
  environment: string,
  history: EnvironmentHistory,
): Promise<ReportedDeployments | undefined> {
  const list = deps.github.listDeploymentRecords?.bind(deps.github);
  // Only a health source of Deployments has a history of them (docs/config.md "Health").
  const health = healthSourceOf(config, environment, deps.appLogin);
  if (list === undefined || health.kind !== "deployments") return undefined;
  const records = await list(
    health.environment,
    { maxDeployments: MAX_DEPLOYMENTS, maxStatuses: MAX_DEPLOYMENT_STATUSES },
    health.reporters,
  );
  const versions = new Map<string, Record<string, ImageVersion> | undefined>();
  for (const { sha, statuses } of records.deployments) {
    if (versions.has(sha) || !statuses.some((status) => status.state === "success")) continue;
    versions.set(
      sha,
      versionsAtChange(history, sha) ?? (await versionsAtCommit(source, config, environment, sha)),
    );
  }
  return { records, applied: appliedCommits(records, (sha) => versions.get(sha)) };
}

/** The config repository's history through the GitHub API, or undefined when the port cannot list commits. */
export function apiHistorySource(deps: AppDeps): HistorySource | undefined {
  const listCommits = deps.github.listCommits?.bind(deps.github);
  if (listCommits === undefined) return undefined;
  return {
    async commits(paths, limit) {
      const bySha = new Map<string, HistoryCommit>();
      for (const path of paths)
        for (const commit of await listCommits(path, limit)) bySha.set(commit.sha, commit);
      return [...bySha.values()].sort((a, b) => b.date.getTime() - a.date.getTime()).slice(0, limit);
    },
    // The Git Data API resolves a commit SHA to its tree.
    filesAt: (sha) => repoFileSource(deps.github, sha),
  };
}

/** One change of an environment as `/status` and the page show it. */
export interface RecentChange {
  image: string;
  /** ISO time of the commit. */
  at: string;
  kind: string;
  from?: string;
  to: string;
  sha: string;
  pull?: number;
  by?: string;
}

/** Commits read for the page's "last changes": a few, newest first (the full history is `/ferry history`). */
export const RECENT_CHANGE_COMMITS = 10;
export const RECENT_CHANGES_SHOWN = 3;

/** The last changes of an environment, newest first, from at most RECENT_CHANGE_COMMITS commits. */
export async function recentChanges(
  deps: AppDeps,
  loaded: LoadedConfig,
  environment: string,
): Promise<RecentChange[]> {
  const source = apiHistorySource(deps);
  if (source === undefined) return [];
  const history = await environmentHistory(source, loaded.config, environment, {
    maxCommits: Math.min(RECENT_CHANGE_COMMITS, loaded.config.history?.maxCommits ?? DEFAULT_HISTORY_COMMITS),
  });
  const version = (v: { tag?: string; digest?: string }): string =>
    v.tag !== undefined ? v.tag : (v.digest ?? "(none)");
  return history.entries
    .slice(-RECENT_CHANGES_SHOWN)
    .reverse()
    .map((entry) => ({
      image: entry.image,
      at: entry.date.toISOString(),
      kind: entry.kind,
      ...(entry.from !== undefined ? { from: version(entry.from) } : {}),
      to: version(entry.to),
      sha: entry.sha,
      ...(entry.pull !== undefined ? { pull: entry.pull } : {}),
      ...(entry.by !== undefined ? { by: entry.by } : {}),
    }));
}
