import { soakSettings, type SoakConfig } from "../core/config/health-schema.js";
import { formatDuration, parseDuration } from "../core/duration.js";
import type { ImageVersion } from "../core/history/history-entry.js";
import type { HealthSource } from "../core/health/health-source.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { environmentHealth } from "./environment-health.js";
import { versionsAtCommit, type HistorySource } from "./environment-history.js";
import type { GitHubContents, GitHubDeployments } from "./github-port.js";
import { repoFileSource } from "./repo-files.js";

export type SoakPending = { code: "unhealthy" | "soaking" | "no-health"; reason: string };

/**
 * Why an environment with `from` and `soak` may not take its upstream's versions yet, or undefined
 * when it may (`soak` in docs/config.md "Health"). Shared by `/promote` and by automatic
 * environments that follow their upstream. A soak never passes silently: with `basis: health`
 * (the default) the upstream's health source must have reported healthy, for `duration`, on a
 * config commit whose upstream files carry the versions being promoted (the base's); an upstream
 * that never reported keeps the promotion waiting, with the reason. `basis: time` counts only the
 * time since those versions landed on the branch.
 */
export async function soakPending(
  deps: AppDeps<GitHubDeployments & GitHubContents>,
  loaded: LoadedConfig,
  upstream: string,
  soak: SoakConfig | undefined,
): Promise<SoakPending | undefined> {
  const settings = soakSettings(soak);
  // Without a soak there is nothing to wait for; the PR's own checks and review gate the merge.
  if (settings === undefined) return undefined;
  const { config } = loaded;
  const files: Pick<HistorySource, "filesAt"> = { filesAt: (sha) => repoFileSource(deps.github, sha) };
  const source = files as HistorySource;
  const promoted = await versionsAtCommit(source, config, upstream, loaded.base.sha);
  const landed = await landedAt(deps, config.environments[upstream]?.paths ?? []);
  const soakMs = parseDuration(settings.duration);
  if (settings.basis === "time") {
    if (landed === undefined) return undefined;
    const age = deps.now().getTime() - landed.getTime();
    if (age >= soakMs) return undefined;
    return {
      code: "soaking",
      reason: `${upstream} has had these versions for ${formatDuration(Math.max(0, age))}, less than its soak of ${settings.duration} (time only)`,
    };
  }
  const { source: from, health } = await environmentHealth(deps, config, upstream, loaded.baseBranch);
  if (health === undefined) {
    const waited =
      landed === undefined
        ? ""
        : ` in ${formatDuration(Math.max(0, deps.now().getTime() - landed.getTime()))}`;
    return { code: "no-health", reason: `no health reported for ${upstream} by ${describe(from)}${waited}` };
  }
  if (health.sha !== loaded.base.sha) {
    const reported = await versionsAtCommit(source, config, upstream, health.sha);
    if (!sameVersions(reported, promoted))
      return {
        code: "no-health",
        reason: `no health reported for ${upstream} with the versions being promoted by ${describe(from)} (its last report, ${health.state}, is on ${health.sha.slice(0, 7)}, which runs others)`,
      };
  }
  if (health.state !== "success")
    return { code: "unhealthy", reason: `${upstream} is not healthy (${health.state})` };
  const healthyFor = deps.now().getTime() - health.since.getTime();
  if (healthyFor < soakMs) {
    return {
      code: "soaking",
      reason: `${upstream} has been healthy for ${formatDuration(Math.max(0, healthyFor))}, less than its soak of ${settings.duration}`,
    };
  }
  return undefined;
}

/** The source as the reason names it, with the identity that counts. */
function describe(source: HealthSource): string {
  if (source.kind === "check-run") return `${source.label} of app ${source.appId}`;
  if (source.reporters.length === 0) return source.label;
  return `${source.label} (as ${source.reporters.join(", ")})`;
}

/** When the upstream's files last changed on the branch (the newest commit touching its paths), if the port can tell. */
async function landedAt(deps: AppDeps<GitHubContents>, paths: readonly string[]): Promise<Date | undefined> {
  const list = deps.github.listCommits?.bind(deps.github);
  if (list === undefined) return undefined;
  let newest: Date | undefined;
  for (const path of paths) {
    const [commit] = await list(path, 1);
    if (commit && (newest === undefined || commit.date > newest)) newest = commit.date;
  }
  return newest;
}

/** Whether two commits' files carry the same version of every image (the digest when both pin one). */
function sameVersions(
  a: Record<string, ImageVersion> | undefined,
  b: Record<string, ImageVersion> | undefined,
): boolean {
  if (a === undefined || b === undefined) return false;
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const name of names) {
    const x = a[name];
    const y = b[name];
    if (x === undefined || y === undefined) return false;
    if (x.digest !== undefined && y.digest !== undefined) {
      if (x.digest !== y.digest) return false;
    } else if (x.tag !== y.tag || x.digest !== y.digest) return false;
  }
  return true;
}
