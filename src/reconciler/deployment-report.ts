/**
 * A cycle's outcome → the GitHub Deployment status it means. Pure. success = Synced and Healthy,
 * failure = Degraded or an error, in_progress otherwise (still rolling out or out of sync).
 */
import { describeDrift } from "../core/deployment-status.js";
import type { DriftRecord } from "./drift.js";
import { describeRef } from "./object-ref.js";
import type { DeploymentReport } from "./ports.js";
import type { CycleResult } from "./reconcile-cycle.js";

/** GitHub rejects deployment status descriptions of 140 characters or more. */
export const MAX_DESCRIPTION = 139;

export function truncateDescription(text: string): string {
  const oneLine = text.replace(/\s+/g, " ").trim();
  return oneLine.length <= MAX_DESCRIPTION ? oneLine : `${oneLine.slice(0, MAX_DESCRIPTION - 1)}…`;
}

/**
 * undefined when there is no commit to attach a status to (the fetch failed). `undoneLastDay`:
 * the manual changes the reconciler undid in the last 24 h (this cycle's included), said in the
 * description so that the app can show it on `/status`, the page and the dashboard.
 */
export function deploymentReportOf(
  result: CycleResult,
  options: { undoneLastDay?: number } = {},
): DeploymentReport | undefined {
  if (!result.revision) return undefined;
  const revision = result.revision;
  if (result.errors.length > 0 && !result.errors.every((error) => error.startsWith("prune:"))) {
    return {
      revision,
      state: "failure",
      description: truncateDescription(`${result.phase} failed: ${result.errors[0]}`),
    };
  }
  if (result.health === "Degraded") {
    const culprit = result.objects.find((object) => object.health === "Degraded");
    const detail = culprit ? `${describeRef(culprit.ref)}: ${culprit.message || "Degraded"}` : "Degraded";
    return { revision, state: "failure", description: truncateDescription(`Degraded: ${detail}`) };
  }
  const undone = result.drift?.undone ?? [];
  const lastDay = Math.max(options.undoneLastDay ?? 0, undone.length);
  // The day's count first (it must survive truncation), then this cycle's first undone field.
  const recent =
    lastDay > 0
      ? `; ${describeDrift(lastDay)}${undone.length > 0 ? `, last: ${describeRecord(undone[0]!)}` : ""}`
      : "";
  if (result.sync === "Synced" && result.health === "Healthy") {
    const drift = recent;
    return {
      revision,
      state: "success",
      description: truncateDescription(`Synced and Healthy: ${result.objects.length} objects${drift}`),
    };
  }
  const left = result.drift?.left[0];
  if (left)
    return {
      revision,
      state: "in_progress",
      description: truncateDescription(
        `OutOfSync, self-heal off: ${left.object} ${left.field} is ${left.live} in the cluster, ${left.git} in Git${left.manager ? ` (by ${left.manager})` : ""}`,
      ),
    };
  const waiting = result.objects.find((object) => object.health !== "Healthy" || object.sync !== "Synced");
  const detail = waiting
    ? `${describeRef(waiting.ref)}: ${waiting.message || waiting.health}`
    : (result.errors[0] ?? "");
  return {
    revision,
    state: "in_progress",
    description: truncateDescription(
      undone.length > 0
        ? `${result.sync}, ${result.health}${recent}`
        : `${result.sync}, ${result.health}${recent}${detail ? ` — ${detail}` : ""}`,
    ),
  };
}

/** `Deployment.apps prod/shop spec.replicas 1 → 3 (by kubectl-scale)`. */
function describeRecord(record: DriftRecord): string {
  return `${record.object} ${record.field} ${record.live} → ${record.git}${record.manager ? ` (by ${record.manager})` : ""}`;
}
