import type { FerryConfig } from "../core/config/schema.js";
import { isUserError, UserError } from "../core/errors.js";
import { buildHistory, DEFAULT_HISTORY_COMMITS, MAX_HISTORY_COMMITS } from "../core/history/history.js";
import type { EnvironmentHistory, HistoryCommit, ImageVersion } from "../core/history/history-entry.js";
import { currentImages } from "./plan-environment.js";
import type { FileSource } from "./plan-inputs.js";

/** Where the config repository's history comes from: the GitHub API (`/ferry history`) or a checkout (`ferry history`). */
export interface HistorySource {
  /** Commits that touched any of `paths`, newest first, at most `limit`. */
  commits(paths: string[], limit: number): Promise<HistoryCommit[]>;
  /** The repository's files at a commit. */
  filesAt(sha: string): FileSource;
}

/**
 * What each image of `environment` ran, commit by commit, over at most `maxCommits` commits that
 * touched the environment's paths (the current config says which files and images count). A
 * commit where the paths did not exist yet or did not parse contributes nothing.
 */
export async function environmentHistory(
  source: HistorySource,
  config: FerryConfig,
  environment: string,
  options: { maxCommits?: number } = {},
): Promise<EnvironmentHistory> {
  const settings = config.environments[environment];
  if (settings === undefined)
    throw new UserError("unknown-environment", `unknown environment ${JSON.stringify(environment)}`);
  const limit = Math.min(Math.max(1, options.maxCommits ?? DEFAULT_HISTORY_COMMITS), MAX_HISTORY_COMMITS);
  // One more than the limit: whether the history goes further back than was read.
  const listed = await source.commits(settings.paths, limit + 1);
  const commits = listed.slice(0, limit);
  const snapshots: { commit: HistoryCommit; versions: Record<string, ImageVersion> }[] = [];
  for (const commit of commits) {
    snapshots.push({
      commit,
      versions: (await versionsAtCommit(source, config, environment, commit.sha)) ?? {},
    });
  }
  return buildHistory(environment, snapshots, { commits: limit, exhausted: listed.length <= limit });
}

/** What each image of `environment` runs at a commit, or undefined when its files are absent or do not parse. */
export async function versionsAtCommit(
  source: HistorySource,
  config: FerryConfig,
  environment: string,
  sha: string,
): Promise<Record<string, ImageVersion> | undefined> {
  const versions: Record<string, ImageVersion> = {};
  try {
    for (const [image, current] of Object.entries(
      await currentImages(source.filesAt(sha), config, environment),
    )) {
      const version: ImageVersion = {};
      if (current.tag !== undefined) version.tag = current.tag;
      if (current.digest !== undefined) version.digest = current.digest;
      versions[image] = version;
    }
  } catch (error) {
    if (!isUserError(error)) throw error;
    return undefined;
  }
  return versions;
}
