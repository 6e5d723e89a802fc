/**
 * Health of the built-in workload kinds, after Argo CD's rules (argoproj/gitops-engine
 * `pkg/health/health_*.go`), so users see the verdicts they already know (docs/architecture.md
 * "Health"). Pure: live object in, verdict out.
 */
import { conditions, int, list, optionalInt, record, report, text } from "./health-fields.js";
import type { HealthReport, KubeObject } from "./types.js";

export function deploymentHealth(object: KubeObject): HealthReport {
  const spec = record(object.spec);
  const status = record(object.status);
  if (spec.paused === true) return report("Suspended", "Deployment is paused");
  const generation = int(object.metadata.generation);
  if (generation > int(status.observedGeneration)) {
    return report(
      "Progressing",
      "Waiting for rollout to finish: observed deployment generation less than desired generation",
    );
  }
  const progressing = conditions(status).find((condition) => condition.type === "Progressing");
  if (progressing && progressing.reason === "ProgressDeadlineExceeded") {
    return report("Degraded", `Deployment "${object.metadata.name}" exceeded its progress deadline`);
  }
  const wanted = optionalInt(spec.replicas);
  const updated = int(status.updatedReplicas);
  if (wanted !== undefined && updated < wanted) {
    return report(
      "Progressing",
      `Waiting for rollout to finish: ${updated} out of ${wanted} new replicas have been updated...`,
    );
  }
  const replicas = int(status.replicas);
  if (replicas > updated) {
    return report(
      "Progressing",
      `Waiting for rollout to finish: ${replicas - updated} old replicas are pending termination...`,
    );
  }
  const available = int(status.availableReplicas);
  if (available < updated) {
    return report(
      "Progressing",
      `Waiting for rollout to finish: ${available} of ${updated} updated replicas are available...`,
    );
  }
  return report("Healthy");
}

export function statefulSetHealth(object: KubeObject): HealthReport {
  const spec = record(object.spec);
  const status = record(object.status);
  const observed = int(status.observedGeneration);
  if (observed === 0 || int(object.metadata.generation) > observed) {
    return report("Progressing", "Waiting for statefulset spec update to be observed...");
  }
  const wanted = optionalInt(spec.replicas);
  const ready = int(status.readyReplicas);
  if (wanted !== undefined && ready < wanted) {
    return report("Progressing", `Waiting for ${wanted - ready} pods to be ready...`);
  }
  const strategy = record(spec.updateStrategy);
  const updated = int(status.updatedReplicas);
  if (strategy.type === "RollingUpdate" && strategy.rollingUpdate !== undefined) {
    const partition = optionalInt(record(strategy.rollingUpdate).partition);
    if (wanted !== undefined && partition !== undefined && updated < wanted - partition) {
      return report(
        "Progressing",
        `Waiting for partitioned roll out to finish: ${updated} out of ${wanted - partition} new pods have been updated...`,
      );
    }
    return report("Healthy", `partitioned roll out complete: ${updated} new pods have been updated...`);
  }
  if (strategy.type === "OnDelete") return report("Healthy", `statefulset has ${ready} ready pods`);
  if (text(status.updateRevision) !== text(status.currentRevision)) {
    return report(
      "Progressing",
      `waiting for statefulset rolling update to complete ${updated} pods at revision ${text(status.updateRevision)}...`,
    );
  }
  return report(
    "Healthy",
    `statefulset rolling update complete ${int(status.currentReplicas)} pods at revision ${text(status.currentRevision)}...`,
  );
}

export function daemonSetHealth(object: KubeObject): HealthReport {
  const spec = record(object.spec);
  const status = record(object.status);
  if (int(object.metadata.generation) > int(status.observedGeneration)) {
    return report(
      "Progressing",
      "Waiting for rollout to finish: observed daemon set generation less than desired generation",
    );
  }
  if (record(spec.updateStrategy).type === "OnDelete") {
    return report(
      "Healthy",
      `daemon set ${int(status.currentNumberScheduled)} out of ${int(status.desiredNumberScheduled)} new pods have been updated`,
    );
  }
  const desired = int(status.desiredNumberScheduled);
  const updated = int(status.updatedNumberScheduled);
  if (updated < desired) {
    return report(
      "Progressing",
      `Waiting for daemon set "${object.metadata.name}" rollout to finish: ${updated} out of ${desired} new pods have been updated...`,
    );
  }
  const available = int(status.numberAvailable);
  if (available < desired) {
    return report(
      "Progressing",
      `Waiting for daemon set "${object.metadata.name}" rollout to finish: ${available} of ${desired} updated pods are available...`,
    );
  }
  return report("Healthy");
}

export function replicaSetHealth(object: KubeObject): HealthReport {
  const spec = record(object.spec);
  const status = record(object.status);
  if (int(object.metadata.generation) > int(status.observedGeneration)) {
    return report(
      "Progressing",
      "Waiting for rollout to finish: observed replica set generation less than desired generation",
    );
  }
  const failure = conditions(status).find(
    (condition) => condition.type === "ReplicaFailure" && condition.status === "True",
  );
  if (failure) return report("Degraded", text(failure.message));
  const wanted = optionalInt(spec.replicas);
  const available = int(status.availableReplicas);
  if (wanted !== undefined && available < wanted) {
    return report(
      "Progressing",
      `Waiting for rollout to finish: ${available} out of ${wanted} new replicas are available...`,
    );
  }
  return report("Healthy");
}

/** Container waiting reasons that mean the pod will not get better on its own (ErrImagePull, CrashLoopBackOff…). */
function isStuckWaitingReason(reason: string): boolean {
  return reason.startsWith("Err") || reason.endsWith("Error") || reason.endsWith("BackOff");
}

export function podHealth(object: KubeObject): HealthReport {
  const spec = record(object.spec);
  const status = record(object.status);
  // The API server defaults restartPolicy to Always.
  const restartPolicy = text(spec.restartPolicy) || "Always";
  const containerStatuses = list(status.containerStatuses);
  const message = text(status.message);
  if (restartPolicy === "Always") {
    const stuck = containerStatuses
      .map((container) => record(record(container.state).waiting))
      .filter((waiting) => isStuckWaitingReason(text(waiting.reason)));
    if (stuck.length > 0) return report("Degraded", stuck.map((waiting) => text(waiting.message)).join(", "));
  }
  switch (status.phase) {
    case "Pending":
      return report("Progressing", message);
    case "Succeeded":
      return report("Healthy", message);
    case "Failed": {
      if (message) return report("Degraded", message);
      for (const container of [...list(status.initContainerStatuses), ...containerStatuses]) {
        const terminated = record(record(container.state).terminated);
        if (text(terminated.message)) return report("Degraded", text(terminated.message));
        if (terminated.reason === "OOMKilled") return report("Degraded", "OOMKilled");
        if (int(terminated.exitCode) !== 0) {
          return report(
            "Degraded",
            `container "${text(container.name)}" failed with exit code ${int(terminated.exitCode)}`,
          );
        }
      }
      return report("Degraded");
    }
    case "Running": {
      if (restartPolicy !== "Always") return report("Progressing", message);
      const ready = conditions(status).some(
        (condition) => condition.type === "Ready" && condition.status === "True",
      );
      if (ready) return report("Healthy", message);
      const restarted = containerStatuses.some(
        (container) => record(container.lastState).terminated !== undefined,
      );
      return report(restarted ? "Degraded" : "Progressing", message);
    }
    default:
      return report("Unknown", message);
  }
}

function hasLoadBalancerIngress(object: KubeObject): boolean {
  return list(record(record(object.status).loadBalancer).ingress).length > 0;
}

export function serviceHealth(object: KubeObject): HealthReport {
  if (record(object.spec).type !== "LoadBalancer") return report("Healthy");
  return hasLoadBalancerIngress(object)
    ? report("Healthy")
    : report("Progressing", "Waiting for a load balancer address");
}

export function ingressHealth(object: KubeObject): HealthReport {
  return hasLoadBalancerIngress(object)
    ? report("Healthy")
    : report("Progressing", "Waiting for an ingress address");
}

export function persistentVolumeClaimHealth(object: KubeObject): HealthReport {
  switch (record(object.status).phase) {
    case "Lost":
      return report("Degraded");
    case "Pending":
      return report("Progressing");
    case "Bound":
      return report("Healthy");
    default:
      return report("Unknown");
  }
}

export function jobHealth(object: KubeObject): HealthReport {
  let failed = false;
  let complete = false;
  let suspended = false;
  let message = "";
  let failMessage = "";
  for (const condition of conditions(record(object.status))) {
    if (condition.type === "Failed" && condition.status === "True") {
      failed = true;
      complete = true;
      failMessage = text(condition.message);
    } else if (condition.type === "Complete" && condition.status === "True") {
      complete = true;
      message = text(condition.message);
    } else if (condition.type === "Suspended" && condition.status === "True") {
      suspended = true;
      message = text(condition.message);
    }
  }
  if (failed) return report("Degraded", failMessage);
  if (complete) return report("Healthy", message);
  if (suspended || record(object.spec).suspend === true)
    return report("Suspended", message || "Job is suspended");
  return report("Progressing", message);
}
