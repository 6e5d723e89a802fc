import { UserError } from "../core/errors.js";
import {
  DEFAULT_HISTORY_COMMITS,
  formatHistory,
  parseHistoryDate,
  type HistoryCommit,
  type HistoryQuery,
} from "../core/history/history.js";
import type { Command } from "../core/pr/commands.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { environmentHistory, type HistorySource } from "./environment-history.js";
import { repoFileSource } from "./repo-files.js";

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
  const listCommits = deps.github.listCommits?.bind(deps.github);
  if (listCommits === undefined) throw new UserError("unsupported", "history is not available here");
  const source: HistorySource = {
    async commits(paths, limit) {
      const bySha = new Map<string, HistoryCommit>();
      for (const path of paths)
        for (const commit of await listCommits(path, limit)) bySha.set(commit.sha, commit);
      return [...bySha.values()].sort((a, b) => b.date.getTime() - a.date.getTime()).slice(0, limit);
    },
    // The Git Data API resolves a commit SHA to its tree.
    filesAt: (sha) => repoFileSource(deps.github, sha),
  };
  const history = await environmentHistory(source, config, command.environment, {
    maxCommits: config.history?.maxCommits ?? DEFAULT_HISTORY_COMMITS,
  });
  const query: HistoryQuery = {};
  if (command.imageName !== undefined) query.image = command.imageName;
  if (command.since !== undefined) query.since = parseHistoryDate(command.since)!;
  if (command.at !== undefined) query.at = parseHistoryDate(command.at)!;
  const base = `${deps.webUrl.replace(/\/+$/, "")}/${deps.github.owner}/${deps.github.repo}`;
  return formatHistory(history, query, {
    markdown: true,
    links: { commit: (sha) => `${base}/commit/${sha}`, pull: (number) => `${base}/pull/${number}` },
  });
}
