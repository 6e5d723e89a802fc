/**
 * Health from the status conventions any controller may follow, for kinds without a rule of their
 * own (docs/architecture.md "Health"): kstatus, as Flux and `kubectl wait` read it (a spec not yet
 * observed is in progress; `Stalled` is a failure, `Reconciling` is work under way; `Ready` says the
 * rest), then `status.phase` where a controller reports one. Pure: live object in, verdict out.
 */
import { condition, record, report, text } from "./health-fields.js";
import type { HealthReport, HealthStatus, KubeObject } from "./types.js";

/** `status.phase` words controllers use, by what they mean (compared case-insensitively). */
const PHASES: Record<string, HealthStatus> = {};
for (const [status, words] of Object.entries({
  Healthy:
    "running succeeded ready active available bound released healthy complete completed deployed established",
  Progressing:
    "pending progressing provisioning creating initializing reconciling updating installing upgrading terminating",
  Degraded: "failed error degraded stalled lost",
  Suspended: "suspended paused",
}) as [HealthStatus, string][])
  for (const word of words.split(" ")) PHASES[word] = status;

/** The verdict of an object's status by convention; undefined when it has no status to read. */
export function conventionHealth(object: KubeObject): HealthReport | undefined {
  const status = record(object.status);
  if (Object.keys(status).length === 0) return undefined;
  const generation = Number(object.metadata.generation ?? 0);
  // Some controllers (Argo Rollouts) write observedGeneration as a string.
  const observed = status.observedGeneration === undefined ? undefined : Number(status.observedGeneration);
  if (observed !== undefined && Number.isFinite(observed) && generation > observed)
    return report("Progressing", `waiting for the controller to observe generation ${generation}`);
  const stalled = condition(status, "Stalled");
  if (stalled?.status === "True") return report("Degraded", said(stalled, "stalled"));
  const reconciling = condition(status, "Reconciling");
  if (reconciling?.status === "True") return report("Progressing", said(reconciling, "reconciling"));
  const ready = condition(status, "Ready");
  if (ready?.status === "True") return report("Healthy", text(ready.message));
  if (ready?.status === "False") return report("Degraded", said(ready, "not ready"));
  if (ready) return report("Progressing", said(ready, "readiness unknown"));
  const phase = text(status.phase);
  if (phase !== "") {
    const verdict = PHASES[phase.toLowerCase()];
    return verdict
      ? report(verdict, text(status.message) || `phase ${phase}`)
      : report("Progressing", `phase ${phase} is not one Ferry reads as done`);
  }
  // A status with neither conditions that speak nor a phase: the controller has reported.
  return report("Healthy");
}

function said(entry: Record<string, unknown>, fallback: string): string {
  const reason = text(entry.reason);
  const message = text(entry.message);
  return [reason, message].filter(Boolean).join(": ") || fallback;
}
