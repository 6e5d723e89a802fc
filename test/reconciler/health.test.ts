import { describe, expect, it } from "vitest";
import { aggregateHealth, assessHealth } from "../../src/reconciler/health.js";
import type { HealthStatus, KubeObject } from "../../src/reconciler/types.js";

function object(
  apiVersion: string,
  kind: string,
  fields: Record<string, unknown>,
  metadata: Record<string, unknown> = {},
): KubeObject {
  return { apiVersion, kind, metadata: { name: "web", namespace: "shop", ...metadata }, ...fields };
}

const deployment = (spec: Record<string, unknown>, status: Record<string, unknown>, generation = 2) =>
  object("apps/v1", "Deployment", { spec, status }, { generation });

describe("assessHealth", () => {
  const cases: { name: string; live: KubeObject | undefined; expected: HealthStatus; message?: RegExp }[] = [
    { name: "an object missing from the cluster is Missing", live: undefined, expected: "Missing" },
    {
      name: "a paused Deployment is Suspended",
      live: deployment(
        { paused: true, replicas: 2 },
        { observedGeneration: 2, updatedReplicas: 2, replicas: 2, availableReplicas: 2 },
      ),
      expected: "Suspended",
    },
    {
      name: "a Deployment whose controller has not seen the new generation is Progressing",
      live: deployment(
        { replicas: 2 },
        { observedGeneration: 1, updatedReplicas: 2, replicas: 2, availableReplicas: 2 },
      ),
      expected: "Progressing",
      message: /observed deployment generation/,
    },
    {
      name: "a Deployment past its progress deadline is Degraded",
      live: deployment(
        { replicas: 2 },
        {
          observedGeneration: 2,
          updatedReplicas: 1,
          replicas: 2,
          conditions: [{ type: "Progressing", status: "False", reason: "ProgressDeadlineExceeded" }],
        },
      ),
      expected: "Degraded",
      message: /exceeded its progress deadline/,
    },
    {
      name: "a Deployment with too few updated replicas is Progressing",
      live: deployment(
        { replicas: 3 },
        { observedGeneration: 2, updatedReplicas: 1, replicas: 3, availableReplicas: 3 },
      ),
      expected: "Progressing",
      message: /1 out of 3 new replicas/,
    },
    {
      name: "a Deployment with old replicas still terminating is Progressing",
      live: deployment(
        { replicas: 2 },
        { observedGeneration: 2, updatedReplicas: 2, replicas: 3, availableReplicas: 2 },
      ),
      expected: "Progressing",
      message: /1 old replicas are pending termination/,
    },
    {
      name: "a Deployment whose updated replicas are not yet available is Progressing",
      live: deployment(
        { replicas: 2 },
        { observedGeneration: 2, updatedReplicas: 2, replicas: 2, availableReplicas: 1 },
      ),
      expected: "Progressing",
      message: /1 of 2 updated replicas are available/,
    },
    {
      name: "a fully rolled-out Deployment is Healthy",
      live: deployment(
        { replicas: 2 },
        { observedGeneration: 2, updatedReplicas: 2, replicas: 2, availableReplicas: 2 },
      ),
      expected: "Healthy",
    },
    {
      name: "a StatefulSet without an observed generation is Progressing",
      live: object("apps/v1", "StatefulSet", { spec: { replicas: 1 }, status: {} }, { generation: 1 }),
      expected: "Progressing",
    },
    {
      name: "a StatefulSet with pods not ready is Progressing",
      live: object(
        "apps/v1",
        "StatefulSet",
        { spec: { replicas: 3 }, status: { observedGeneration: 1, readyReplicas: 1 } },
        { generation: 1 },
      ),
      expected: "Progressing",
      message: /Waiting for 2 pods to be ready/,
    },
    {
      name: "a StatefulSet mid rolling update (revisions differ) is Progressing",
      live: object(
        "apps/v1",
        "StatefulSet",
        {
          spec: { replicas: 2, updateStrategy: { type: "RollingUpdate" } },
          status: { observedGeneration: 1, readyReplicas: 2, updateRevision: "b", currentRevision: "a" },
        },
        { generation: 1 },
      ),
      expected: "Progressing",
    },
    {
      name: "a StatefulSet with a partition not yet reached is Progressing",
      live: object(
        "apps/v1",
        "StatefulSet",
        {
          spec: { replicas: 4, updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 2 } } },
          status: { observedGeneration: 1, readyReplicas: 4, updatedReplicas: 1 },
        },
        { generation: 1 },
      ),
      expected: "Progressing",
      message: /1 out of 2 new pods/,
    },
    {
      name: "a StatefulSet whose revisions match is Healthy",
      live: object(
        "apps/v1",
        "StatefulSet",
        {
          spec: { replicas: 2 },
          status: { observedGeneration: 1, readyReplicas: 2, updateRevision: "a", currentRevision: "a" },
        },
        { generation: 1 },
      ),
      expected: "Healthy",
    },
    {
      name: "a DaemonSet with pods not yet updated is Progressing",
      live: object(
        "apps/v1",
        "DaemonSet",
        {
          spec: {},
          status: {
            observedGeneration: 1,
            desiredNumberScheduled: 3,
            updatedNumberScheduled: 2,
            numberAvailable: 3,
          },
        },
        { generation: 1 },
      ),
      expected: "Progressing",
    },
    {
      name: "a DaemonSet with unavailable pods is Progressing",
      live: object(
        "apps/v1",
        "DaemonSet",
        {
          spec: {},
          status: {
            observedGeneration: 1,
            desiredNumberScheduled: 3,
            updatedNumberScheduled: 3,
            numberAvailable: 2,
          },
        },
        { generation: 1 },
      ),
      expected: "Progressing",
    },
    {
      name: "a DaemonSet with every pod updated and available is Healthy",
      live: object(
        "apps/v1",
        "DaemonSet",
        {
          spec: {},
          status: {
            observedGeneration: 1,
            desiredNumberScheduled: 3,
            updatedNumberScheduled: 3,
            numberAvailable: 3,
          },
        },
        { generation: 1 },
      ),
      expected: "Healthy",
    },
    {
      name: "a ReplicaSet with a ReplicaFailure condition is Degraded",
      live: object(
        "apps/v1",
        "ReplicaSet",
        {
          spec: { replicas: 2 },
          status: {
            observedGeneration: 1,
            conditions: [{ type: "ReplicaFailure", status: "True", message: "quota exceeded" }],
          },
        },
        { generation: 1 },
      ),
      expected: "Degraded",
      message: /quota exceeded/,
    },
    {
      name: "a ReplicaSet short of available replicas is Progressing",
      live: object(
        "apps/v1",
        "ReplicaSet",
        { spec: { replicas: 2 }, status: { observedGeneration: 1, availableReplicas: 1 } },
        { generation: 1 },
      ),
      expected: "Progressing",
    },
    {
      name: "a ReplicaSet with all replicas available is Healthy",
      live: object(
        "apps/v1",
        "ReplicaSet",
        { spec: { replicas: 2 }, status: { observedGeneration: 1, availableReplicas: 2 } },
        { generation: 1 },
      ),
      expected: "Healthy",
    },
    {
      name: "a Pod waiting on ImagePullBackOff is Degraded",
      live: object("v1", "Pod", {
        spec: {},
        status: {
          phase: "Pending",
          containerStatuses: [
            { name: "web", state: { waiting: { reason: "ImagePullBackOff", message: "no such image" } } },
          ],
        },
      }),
      expected: "Degraded",
      message: /no such image/,
    },
    {
      name: "a Pending Pod is Progressing",
      live: object("v1", "Pod", { spec: {}, status: { phase: "Pending" } }),
      expected: "Progressing",
    },
    {
      name: "a Running, Ready Pod is Healthy",
      live: object("v1", "Pod", {
        spec: {},
        status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
      }),
      expected: "Healthy",
    },
    {
      name: "a Running Pod that is not Ready after a restart is Degraded",
      live: object("v1", "Pod", {
        spec: {},
        status: {
          phase: "Running",
          containerStatuses: [{ name: "web", lastState: { terminated: { exitCode: 1 } } }],
        },
      }),
      expected: "Degraded",
    },
    {
      name: "a Failed Pod reports its container's exit code",
      live: object("v1", "Pod", {
        spec: { restartPolicy: "Never" },
        status: {
          phase: "Failed",
          containerStatuses: [{ name: "job", state: { terminated: { exitCode: 2 } } }],
        },
      }),
      expected: "Degraded",
      message: /exit code 2/,
    },
    {
      name: "a Succeeded Pod is Healthy",
      live: object("v1", "Pod", { spec: { restartPolicy: "Never" }, status: { phase: "Succeeded" } }),
      expected: "Healthy",
    },
    {
      name: "a ClusterIP Service is Healthy",
      live: object("v1", "Service", { spec: { type: "ClusterIP" } }),
      expected: "Healthy",
    },
    {
      name: "a LoadBalancer Service without an ingress address is Progressing",
      live: object("v1", "Service", { spec: { type: "LoadBalancer" }, status: { loadBalancer: {} } }),
      expected: "Progressing",
    },
    {
      name: "a LoadBalancer Service with an ingress address is Healthy",
      live: object("v1", "Service", {
        spec: { type: "LoadBalancer" },
        status: { loadBalancer: { ingress: [{ ip: "10.0.0.1" }] } },
      }),
      expected: "Healthy",
    },
    {
      name: "an Ingress without an address is Progressing",
      live: object("networking.k8s.io/v1", "Ingress", { spec: {}, status: { loadBalancer: {} } }),
      expected: "Progressing",
    },
    {
      name: "an Ingress with an address is Healthy",
      live: object("networking.k8s.io/v1", "Ingress", {
        spec: {},
        status: { loadBalancer: { ingress: [{ hostname: "lb.example.com" }] } },
      }),
      expected: "Healthy",
    },
    {
      name: "a Bound PVC is Healthy",
      live: object("v1", "PersistentVolumeClaim", { status: { phase: "Bound" } }),
      expected: "Healthy",
    },
    {
      name: "a Pending PVC is Progressing",
      live: object("v1", "PersistentVolumeClaim", { status: { phase: "Pending" } }),
      expected: "Progressing",
    },
    {
      name: "a Lost PVC is Degraded",
      live: object("v1", "PersistentVolumeClaim", { status: { phase: "Lost" } }),
      expected: "Degraded",
    },
    {
      name: "a running Job is Progressing",
      live: object("batch/v1", "Job", { spec: {}, status: { active: 1 } }),
      expected: "Progressing",
    },
    {
      name: "a complete Job is Healthy",
      live: object("batch/v1", "Job", {
        spec: {},
        status: { conditions: [{ type: "Complete", status: "True" }] },
      }),
      expected: "Healthy",
    },
    {
      name: "a failed Job is Degraded with the condition's message",
      live: object("batch/v1", "Job", {
        spec: {},
        status: { conditions: [{ type: "Failed", status: "True", message: "BackoffLimitExceeded" }] },
      }),
      expected: "Degraded",
      message: /BackoffLimitExceeded/,
    },
    {
      name: "a suspended Job is Suspended",
      live: object("batch/v1", "Job", { spec: { suspend: true }, status: {} }),
      expected: "Suspended",
    },
    {
      name: "a kind without a rule is Healthy once it exists",
      live: object("v1", "ConfigMap", { data: {} }),
      expected: "Healthy",
    },
  ];

  for (const { name, live, expected, message } of cases) {
    it(name, () => {
      const verdict = assessHealth(live);
      expect(verdict.status).toBe(expected);
      if (message) expect(verdict.message).toMatch(message);
    });
  }
});

describe("aggregateHealth", () => {
  it("is Healthy for no objects", () => {
    expect(aggregateHealth([])).toBe("Healthy");
  });

  it("takes the worst status, with Degraded worse than Progressing", () => {
    expect(aggregateHealth(["Healthy", "Progressing", "Degraded"])).toBe("Degraded");
    expect(aggregateHealth(["Healthy", "Progressing", "Suspended"])).toBe("Progressing");
  });

  it("ranks Missing worse than Progressing and Unknown worst of all, as Argo CD does", () => {
    expect(aggregateHealth(["Progressing", "Missing"])).toBe("Missing");
    expect(aggregateHealth(["Degraded", "Unknown"])).toBe("Unknown");
  });
});
