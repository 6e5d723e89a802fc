/**
 * The words of a reconciler's GitHub Deployment status, written by the reconciler and read back
 * by the app (`/status`, the page, the dashboard). A Deployment status carries only a state and a
 * description under 140 characters
 * (https://docs.github.com/en/rest/deployments/statuses#create-a-deployment-status), so the
 * description is the one channel: the reconciler writes it with these functions and the app
 * reads it with them. Pure.
 */

/** `2 manual changes undone in the last 24 h` (docs/architecture.md "Drift made visible"). */
export function describeDrift(count: number): string {
  return `${count} manual change${count === 1 ? "" : "s"} undone in the last 24 h`;
}

const DRIFT_COUNT = /(\d+) manual changes? undone in the last 24 h/;
const SELF_HEAL_OFF = /^OutOfSync, self-heal off: (.*)$/;
const SYNC = /^(Synced|OutOfSync|Unknown)\b/;
const HEALTH = /\b(Healthy|Progressing|Degraded|Suspended|Missing|Unknown)\b/;

/** The 24 h drift count a description carries, or undefined when it names none. */
export function driftCountIn(description: string | undefined): number | undefined {
  const match = DRIFT_COUNT.exec(description ?? "");
  return match ? Number(match[1]) : undefined;
}

export type DeploymentStatusState =
  "success" | "failure" | "error" | "in_progress" | "queued" | "pending" | "inactive";

/** What an environment's latest Deployment status says, as `/status` shows it. */
export interface EnvironmentDeployment {
  state: DeploymentStatusState;
  /** The reconciler's own words. */
  description: string;
  /** The config commit it refers to. */
  sha: string;
  /** ISO time the status was posted. */
  at: string;
  sync: string;
  health: string;
  /** Manual changes undone in the last 24 h, or drift left in place (self-heal off); absent when none. */
  drift?: string;
}

/** Reads a Deployment status (state and description) into sync, health and drift. */
export function readDeploymentStatus(input: {
  state: DeploymentStatusState;
  description: string;
  sha: string;
  at: string;
}): EnvironmentDeployment {
  const { state, description } = input;
  const left = SELF_HEAL_OFF.exec(description)?.[1];
  const count = driftCountIn(description);
  const sync =
    state === "success"
      ? "Synced"
      : (SYNC.exec(description)?.[1] ?? (state === "failure" ? "Failed" : "Unknown"));
  const health =
    state === "success"
      ? "Healthy"
      : description.startsWith("Degraded")
        ? "Degraded"
        : state === "failure" || state === "error"
          ? "Unknown"
          : (HEALTH.exec(description.replace(SYNC, ""))?.[1] ?? "Unknown");
  const result: EnvironmentDeployment = { ...input, sync, health };
  if (left !== undefined) result.drift = `left in place (self-heal off): ${left}`;
  else if (count !== undefined && count > 0) result.drift = describeDrift(count);
  return result;
}
