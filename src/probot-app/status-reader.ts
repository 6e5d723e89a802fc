import type { SecretRedactor } from "../core/redact.js";
import type { Probot } from "probot";
import type { OctokitLike } from "../adapters/github/github-repo.js";
import type { AppDeps, AppLogger, LoadedConfig } from "../app/app-deps.js";
import { loadRepoConfig } from "../app/load-repo-config.js";
import { collectStatus } from "../app/collect-status.js";
import { findDashboard, lastNotices } from "../app/dashboard-issue.js";
import { loadState } from "../app/state-ref.js";
import { errorText } from "../app/error-text.js";
import { recentChanges, type RecentChange } from "../app/history-command.js";
import { eachInstallation, installationRepos } from "./installations.js";

export interface StatusReaderOptions {
  /** Resolves once the app's own login is known (docs/reliability.md row 81): a walk waits for it. */
  ready?: () => Promise<void>;
  depsFor(octokit: OctokitLike, owner: string, repo: string): AppDeps;
  log: () => AppLogger;
  clock: () => number;
  /** Every secret this process holds: none may reach the `/status` answer. */
  secrets: SecretRedactor;
  /** How long an answer is reused: each one walks every installation and repository. */
  ttlMs: number;
  /** How long past the TTL the last answer is still served while a walk refreshes it. */
  maxStaleMs: number;
  /** At most this many repositories are visited for one answer. */
  maxRepositories: number;
}

/**
 * `GET /status`: environments × images of every configured repository. A monitoring scrape or a
 * dashboard refresh must not turn into one GitHub walk per request: concurrent and repeated
 * requests within the TTL share one answer. Past the TTL the last answer is still served, at most
 * `maxStaleMs` more, while one walk refreshes it in the background, so a scrape never waits on a
 * walk of GitHub once there is an answer (docs/capacity.md "Soak"); older than that, the
 * request waits for the walk. A failed walk is not kept. A GET never writes.
 */
export function createStatusReader(
  options: StatusReaderOptions,
): (probot: Probot) => Promise<Record<string, unknown>> {
  /** The last walk that succeeded, by the time it started. */
  let answer: { at: number; value: Record<string, unknown> } | undefined;
  /** The walk under way: at most one at a time. */
  let walking: Promise<Record<string, unknown>> | undefined;

  const collect = async (probot: Probot): Promise<Record<string, unknown>> => {
    await options.ready?.();
    const result: Record<string, unknown> = {};
    let budget = options.maxRepositories;
    await eachInstallation(probot, async (octokit) => {
      if (budget <= 0) return;
      for (const { owner, repo, defaultBranch } of await installationRepos(octokit)) {
        if (budget-- <= 0) {
          options
            .log()
            .warn(
              { limit: options.maxRepositories },
              "status: repository limit reached; the rest is left out",
            );
          return;
        }
        const deps = options.depsFor(octokit, owner, repo);
        // A GET never writes: a broken config is reported by the sync, not by a status read.
        const loaded = await loadRepoConfig(deps, defaultBranch, { readOnly: true });
        if (!loaded.ok) continue;
        const { state, dashboard } = await loadState(deps);
        const status = await collectStatus(deps, loaded, state);
        // What the last scan noticed (an unsigned tag not proposed, a tag outside its policy).
        const notices = await lastNotices(
          deps,
          dashboard === undefined ? ((await findDashboard(deps, state)) ?? null) : dashboard,
        );
        const changes = await lastChanges(deps, loaded, options.log());
        result[`${owner}/${repo}`] = {
          ...status,
          ...(notices.length > 0 ? { notices } : {}),
          ...(Object.keys(changes).length > 0 ? { changes } : {}),
        };
      }
    });
    return result;
  };

  const walk = (probot: Probot, at: number): Promise<Record<string, unknown>> => {
    if (walking) return walking;
    const value = collect(probot).then((found) => options.secrets.redactDeep(found));
    walking = value;
    value
      .then(
        (found) => {
          answer = { at, value: found };
        },
        (error: unknown) => {
          options.log().warn({ error: errorText(error, options.secrets) }, "status: walk failed");
        },
      )
      .finally(() => {
        if (walking === value) walking = undefined;
      });
    return value;
  };

  return async (probot) => {
    const at = options.clock();
    const age = answer === undefined ? Infinity : at - answer.at;
    if (answer && age < options.ttlMs) return answer.value;
    if (answer && age < options.ttlMs + options.maxStaleMs) {
      // Served as it was; the walk's failure is logged, and the next request tries again.
      walk(probot, at).catch(() => undefined);
      return answer.value;
    }
    return walk(probot, at);
  };
}

/** Each environment's last changes from the config repo's history (a few commits each), for the page. */
async function lastChanges(
  deps: AppDeps,
  loaded: LoadedConfig,
  log: AppLogger,
): Promise<Record<string, RecentChange[]>> {
  const changes: Record<string, RecentChange[]> = {};
  for (const environment of Object.keys(loaded.config.environments)) {
    try {
      const recent = await recentChanges(deps, loaded, environment);
      if (recent.length > 0) changes[environment] = recent;
    } catch (error) {
      log.warn(
        { environment, error: errorText(error, deps.secrets) },
        "status: cannot read the environment's history",
      );
    }
  }
  return changes;
}
