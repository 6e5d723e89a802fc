/**
 * Health of kinds beyond the workloads, after the rules Argo CD ships for them (gitops-engine's
 * HPA and APIService checks, and its resource customizations for CronJob, PodDisruptionBudget,
 * Argo Rollouts' Rollout and cert-manager's Certificate), so a failing one reads Degraded instead
 * of Healthy-once-applied (docs/architecture.md "Health"). Pure: live object in, verdict out.
 */
import { condition, conditions, int, list, record, report, text } from "./health-fields.js";
import { conventionHealth } from "./health-kstatus.js";
import type { HealthReport, KubeObject } from "./types.js";

/** A CronJob runs later: it is Degraded only when its last run is known to have failed. */
export function cronJobHealth(object: KubeObject): HealthReport {
  if (record(object.spec).suspend === true) return report("Suspended", "CronJob is suspended");
  if (object.status === undefined) return report("Progressing", "Waiting for CronJob");
  const status = record(object.status);
  const scheduled = text(status.lastScheduleTime);
  if (scheduled === "") return report("Healthy", "CronJob has not been scheduled yet");
  const succeeded = text(status.lastSuccessfulTime);
  if (succeeded === "") return report("Healthy", "CronJob has not completed a run yet");
  if (list(status.active).length > 0) return report("Healthy", "CronJob is running a job");
  // RFC 3339 times in UTC compare as text.
  if (succeeded < scheduled) return report("Degraded", "CronJob has not completed its last run successfully");
  return report("Healthy", "CronJob completed its last run successfully");
}

/** The HPA conditions that mean it cannot scale (gitops-engine `isDegraded`). */
const HPA_DEGRADED = new Set([
  "AbleToScale/FailedGetScale",
  "AbleToScale/FailedUpdateScale",
  "ScalingActive/FailedGetResourceMetric",
  "ScalingActive/InvalidSelector",
]);

export function horizontalPodAutoscalerHealth(object: KubeObject): HealthReport {
  let found = conditions(record(object.status));
  // autoscaling/v1 keeps its conditions in an annotation.
  const annotated = object.metadata.annotations?.["autoscaling.alpha.kubernetes.io/conditions"];
  if (found.length === 0 && annotated !== undefined) {
    try {
      found = list(JSON.parse(annotated));
    } catch {
      return report("Unknown", "the HPA's conditions annotation is not JSON");
    }
  }
  for (const entry of found) {
    if (HPA_DEGRADED.has(`${text(entry.type)}/${text(entry.reason)}`))
      return report("Degraded", text(entry.message));
    if ((entry.type === "AbleToScale" || entry.type === "ScalingLimited") && entry.status === "True")
      return report("Healthy", text(entry.message));
  }
  return report("Progressing", "Waiting to autoscale");
}

export function podDisruptionBudgetHealth(object: KubeObject): HealthReport {
  let verdict = report("Progressing", "Waiting for status");
  for (const entry of conditions(record(object.status))) {
    // Too few pods to disrupt is a valid state (a one-replica workload), not a failure.
    if (entry.status === "False" && entry.reason !== "InsufficientPods")
      return report("Degraded", `PodDisruptionBudget has ${text(entry.reason)}`);
    verdict = report("Healthy", `PodDisruptionBudget has ${text(entry.reason)}`);
  }
  return verdict;
}

export function apiServiceHealth(object: KubeObject): HealthReport {
  const available = condition(record(object.status), "Available");
  if (!available) return report("Progressing", "Waiting to be processed");
  const message = `${text(available.reason)}: ${text(available.message)}`;
  return report(available.status === "True" ? "Healthy" : "Progressing", message);
}

/**
 * Argo Rollouts 1.x reports its own verdict in `status.phase` (Healthy, Progressing, Degraded,
 * Paused) once it has observed the spec; older controllers only the replica counts.
 */
export function rolloutHealth(object: KubeObject): HealthReport {
  const status = record(object.status);
  const invalid = condition(status, "InvalidSpec");
  if (invalid) return report("Degraded", text(invalid.message));
  // Rollouts writes observedGeneration as a string.
  const observed = Number(status.observedGeneration ?? 0);
  if (int(object.metadata.generation) > observed)
    return report("Progressing", "Waiting for rollout spec update to be observed");
  // A rollout that gave up (aborted, or past its progressDeadlineSeconds) has failed, whatever
  // its replica counts say (Argo CD's rule; test data degraded_rolloutTimeout).
  const progressing = condition(status, "Progressing");
  if (progressing && ["RolloutAborted", "ProgressDeadlineExceeded"].includes(text(progressing.reason)))
    return report("Degraded", text(progressing.message));
  const message = text(status.message);
  switch (status.phase) {
    case "Paused":
      return report("Suspended", message || "Rollout is paused");
    case "Healthy":
    case "Degraded":
    case "Progressing":
      return report(status.phase, message);
  }
  const wanted = record(object.spec).replicas;
  const updated = int(status.updatedReplicas);
  if (typeof wanted === "number" && updated < wanted)
    return report("Progressing", "Waiting for roll out to finish: more replicas need to be updated");
  if (int(status.replicas) > updated)
    return report("Progressing", "Waiting for roll out to finish: old replicas are pending termination");
  if (int(status.availableReplicas) < updated)
    return report(
      "Progressing",
      "Waiting for roll out to finish: updated replicas are still becoming available",
    );
  return status.phase === undefined && object.status === undefined
    ? report("Progressing", "Waiting for rollout status")
    : report("Healthy");
}

/** cert-manager: Issuing first (a renewal in progress), then Ready. */
export function certificateHealth(object: KubeObject): HealthReport {
  const status = record(object.status);
  const issuing = condition(status, "Issuing");
  if (issuing?.status === "True") return report("Progressing", text(issuing.message));
  const ready = condition(status, "Ready");
  if (ready?.status === "False") return report("Degraded", text(ready.message));
  if (ready?.status === "True") return report("Healthy", text(ready.message));
  return report("Progressing", "Waiting for certificate");
}

/**
 * Flux helm-controller's HelmRelease: the kstatus conventions (health-kstatus.ts), except that
 * Ready False on an observed spec is Degraded even while Reconciling is True: a release whose
 * upgrade failed and was rolled back, retrying (`ProgressingWithRetry`), has failed, as Argo CD
 * reads it (its test data `HelmRelease/testdata/degraded.yaml`). `spec.suspend` is Suspended.
 */
export function helmReleaseHealth(object: KubeObject): HealthReport {
  if (record(object.spec).suspend === true) return report("Suspended", "HelmRelease is suspended");
  const status = record(object.status);
  const observed = status.observedGeneration;
  const stale = observed !== undefined && int(object.metadata.generation) > Number(observed);
  const ready = condition(status, "Ready");
  const verdict = conventionHealth(object) ?? report("Progressing", "Waiting for the HelmRelease's status");
  if (verdict.status === "Progressing" && !stale && ready?.status === "False")
    return report("Degraded", [text(ready.reason), text(ready.message)].filter(Boolean).join(": "));
  return verdict;
}
