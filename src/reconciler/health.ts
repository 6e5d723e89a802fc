/**
 * Health of live objects (docs/architecture.md "Health"), worst-first aggregation after Argo CD.
 * A kind with a rule of its own (Argo CD's built-ins and resource customizations:
 * `health-workloads.ts`, `health-extensions.ts`) gets that rule; any other kind is read by the
 * status conventions (`health-kstatus.ts`). An object with no status yet is Progressing when its
 * kind reports status (a status subresource, or `status` in its schema) and Healthy once it exists
 * when the kind never does (ServiceMonitor, ConfigMap). An object annotated
 * `ferry.dev/health: ignore` (or Argo CD's `argocd.argoproj.io/ignore-healthcheck: "true"`) is
 * Healthy once it exists. Pure: live object in, verdict out.
 */
import { report } from "./health-fields.js";
import {
  apiServiceHealth,
  certificateHealth,
  helmReleaseHealth,
  cronJobHealth,
  horizontalPodAutoscalerHealth,
  podDisruptionBudgetHealth,
  rolloutHealth,
} from "./health-extensions.js";
import { conventionHealth } from "./health-kstatus.js";
import {
  daemonSetHealth,
  deploymentHealth,
  ingressHealth,
  jobHealth,
  persistentVolumeClaimHealth,
  podHealth,
  replicaSetHealth,
  serviceHealth,
  statefulSetHealth,
} from "./health-workloads.js";
import type { HealthReport, HealthStatus, KubeObject, StatusReporting } from "./types.js";

export const HEALTH_ANNOTATION = "ferry.dev/health";
const ARGOCD_IGNORE_HEALTH = "argocd.argoproj.io/ignore-healthcheck";

export type { StatusReporting } from "./types.js";

/** Rules by `group/kind` (core group: just the kind). An explicit map: no discovery by name. */
const HEALTH_RULES: Record<string, (object: KubeObject) => HealthReport> = {
  "apps/Deployment": deploymentHealth,
  "apps/StatefulSet": statefulSetHealth,
  "apps/DaemonSet": daemonSetHealth,
  "apps/ReplicaSet": replicaSetHealth,
  Pod: podHealth,
  Service: serviceHealth,
  "networking.k8s.io/Ingress": ingressHealth,
  PersistentVolumeClaim: persistentVolumeClaimHealth,
  "batch/Job": jobHealth,
  "batch/CronJob": cronJobHealth,
  "autoscaling/HorizontalPodAutoscaler": horizontalPodAutoscalerHealth,
  "policy/PodDisruptionBudget": podDisruptionBudgetHealth,
  "apiregistration.k8s.io/APIService": apiServiceHealth,
  "argoproj.io/Rollout": rolloutHealth,
  "cert-manager.io/Certificate": certificateHealth,
  "helm.toolkit.fluxcd.io/HelmRelease": helmReleaseHealth,
};

/** The `group/kind` of an object (core group: just the kind), as the rules and `statusOf` key it. */
export function groupKind(apiVersion: string, kind: string): string {
  const slash = apiVersion.lastIndexOf("/");
  return slash === -1 ? kind : `${apiVersion.slice(0, slash)}/${kind}`;
}

/**
 * The health of one object; `undefined` live means it is not in the cluster (Missing). `statusOf`
 * says, per `group/kind`, whether its objects carry a status at all.
 */
export function assessHealth(
  live: KubeObject | undefined,
  statusOf: (groupKind: string) => StatusReporting | undefined = () => undefined,
): HealthReport {
  if (live === undefined) return report("Missing", "object does not exist in the cluster");
  const annotations = live.metadata.annotations ?? {};
  if (annotations[HEALTH_ANNOTATION] === "ignore" || annotations[ARGOCD_IGNORE_HEALTH] === "true")
    return report("Healthy", "health check ignored by annotation");
  if (live.metadata.deletionTimestamp !== undefined) return report("Progressing", "pending deletion");
  const key = groupKind(live.apiVersion, live.kind);
  const rule = HEALTH_RULES[key];
  if (rule) return rule(live);
  const verdict = conventionHealth(live);
  if (verdict) return verdict;
  return statusOf(key) === "reports"
    ? report("Progressing", `waiting for the ${live.kind}'s controller to report status`)
    : report("Healthy");
}

/** Worst first: Argo CD's `healthOrder` (gitops-engine `pkg/health/health.go`), where Unknown ranks worst. */
const HEALTH_SEVERITY: HealthStatus[] = [
  "Unknown",
  "Degraded",
  "Missing",
  "Progressing",
  "Suspended",
  "Healthy",
];

export function aggregateHealth(statuses: HealthStatus[]): HealthStatus {
  if (statuses.length === 0) return "Healthy";
  return statuses.reduce((worst, next) =>
    HEALTH_SEVERITY.indexOf(next) < HEALTH_SEVERITY.indexOf(worst) ? next : worst,
  );
}
