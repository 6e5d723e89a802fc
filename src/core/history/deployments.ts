import { readDeploymentStatus, type DeploymentStatusState } from "../deployment-status.js";
import type { EnvironmentHistory, HistoryEntry, ImageVersion } from "./history-entry.js";

/**
 * What the environment's reconciler reported through GitHub Deployment statuses, set beside the
 * config repository's history: when a commit was actually applied (its first `success` status)
 * and how healthy it was, as opposed to when it was merged. A Deployment names the config commit
 * it applied and its statuses carry the state and the reconciler's words
 * (https://docs.github.com/en/rest/deployments/statuses). Pure: records in, answers out.
 */

/** Deployment statuses read for one answer (one request per Deployment, newest first). */
export const MAX_DEPLOYMENT_STATUSES = 100;
/** Deployments listed for one answer: each costs a request for its statuses. */
export const MAX_DEPLOYMENTS = 30;

export interface DeploymentStatusRecord {
  state: DeploymentStatusState;
  description: string;
  at: Date;
}

/** One Deployment of the environment: the config commit it applied and its statuses, oldest first. */
export interface DeploymentRecord {
  sha: string;
  statuses: DeploymentStatusRecord[];
}

export interface DeploymentRecords {
  environment: string;
  /** Newest first, as GitHub lists them. */
  deployments: DeploymentRecord[];
  /** Statuses read. */
  statusesRead: number;
  /** Set when the bound was reached before the oldest Deployment: older reports were not read. */
  stopped: boolean;
}

/** A commit the reconciler reported applied: its first `success` status. */
export interface AppliedCommit {
  sha: string;
  appliedAt: Date;
  /** What each image of the environment ran at that commit (from the config repository's files). */
  versions: Record<string, ImageVersion>;
  /** Health in the latest status of this Deployment read (`Healthy`, `Degraded`, …). */
  health: string;
  /** The statuses, oldest first, to tell the health at a given moment. */
  statuses: DeploymentStatusRecord[];
}

/** The Deployments that reached `success`, each with the versions its commit ran (from `versionsOf`). */
export function appliedCommits(
  records: DeploymentRecords,
  versionsOf: (sha: string) => Record<string, ImageVersion> | undefined,
): AppliedCommit[] {
  const applied: AppliedCommit[] = [];
  for (const deployment of records.deployments) {
    const success = deployment.statuses.find((status) => status.state === "success");
    const versions = versionsOf(deployment.sha);
    if (success === undefined || versions === undefined) continue;
    applied.push({
      sha: deployment.sha,
      appliedAt: success.at,
      versions,
      health: healthOf(deployment.sha, deployment.statuses),
      statuses: deployment.statuses,
    });
  }
  return applied.sort((a, b) => a.appliedAt.getTime() - b.appliedAt.getTime());
}

function healthOf(sha: string, statuses: DeploymentStatusRecord[], at?: Date): string {
  const upTo = at === undefined ? statuses : statuses.filter((status) => status.at.getTime() <= at.getTime());
  const latest = upTo.at(-1);
  if (latest === undefined) return "Unknown";
  if (latest.state === "inactive") return "superseded";
  return readDeploymentStatus({ ...latest, sha, at: latest.at.toISOString() }).health;
}

/** The commit the cluster was running at `at`: the last one reported applied at or before it. */
export function appliedAt(applied: AppliedCommit[], at: Date): AppliedCommit | undefined {
  let found: AppliedCommit | undefined;
  for (const commit of applied) if (commit.appliedAt.getTime() <= at.getTime()) found = commit;
  return found;
}

/** The health the reconciler reported for `commit` as of `at`. */
export function healthAt(commit: AppliedCommit, at: Date): string {
  return healthOf(commit.sha, commit.statuses, at);
}

function sameVersion(a: ImageVersion | undefined, b: ImageVersion | undefined): boolean {
  return a?.tag === b?.tag && a?.digest === b?.digest;
}

/** When the reconciler first reported `entry`'s version of its image applied, at or after the change. */
export function entryApplied(entry: HistoryEntry, applied: AppliedCommit[]): AppliedCommit | undefined {
  return applied.find(
    (commit) =>
      commit.appliedAt.getTime() >= entry.date.getTime() &&
      sameVersion(commit.versions[entry.image], entry.to),
  );
}

/**
 * What each image ran at a commit of the history, when the commit is one that changed something
 * (then the entries say all): the versions in force at its date.
 */
export function versionsAtChange(
  history: EnvironmentHistory,
  sha: string,
): Record<string, ImageVersion> | undefined {
  const last = history.entries.findLastIndex((entry) => entry.sha === sha);
  if (last === -1) return undefined;
  const versions: Record<string, ImageVersion> = {};
  // Entries are in commit order, oldest first: everything up to this commit's own.
  for (const entry of history.entries.slice(0, last + 1)) versions[entry.image] = entry.to;
  return versions;
}
