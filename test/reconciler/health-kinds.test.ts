/**
 * Health beyond the workloads (docs/architecture.md "Health"): the kinds Argo CD ships rules for,
 * the kstatus conventions for any other kind, and the rule for silence. Each case is a status
 * document as its controller writes it (cert-manager, Flux helm-controller, Argo Rollouts, the
 * Kubernetes controllers), so a failing one must read Degraded, not Healthy-once-applied.
 */
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { assessHealth, type StatusReporting } from "../../src/reconciler/health.js";
import type { HealthStatus, KubeObject } from "../../src/reconciler/types.js";

function live(apiVersion: string, kind: string, body: Record<string, unknown>, metadata = {}): KubeObject {
  return {
    apiVersion,
    kind,
    metadata: { name: "shop", namespace: "shop", generation: 3, ...metadata },
    ...body,
  };
}

const T = (minutes: number) => new Date(Date.UTC(2026, 11, 1, 12, minutes)).toISOString().replace(".000", "");

const certificate = (conditions: unknown[]) =>
  live("cert-manager.io/v1", "Certificate", {
    spec: {
      secretName: "shop-tls",
      dnsNames: ["shop.example.com"],
      issuerRef: { name: "letsencrypt", kind: "ClusterIssuer" },
    },
    status: { conditions },
  });

const helmRelease = (conditions: unknown[], observedGeneration = 3) =>
  live("helm.toolkit.fluxcd.io/v2", "HelmRelease", {
    spec: {
      interval: "10m",
      chart: { spec: { chart: "shop", sourceRef: { kind: "HelmRepository", name: "acme" } } },
    },
    status: { observedGeneration, conditions, lastAttemptedRevision: "1.8.0" },
  });

const rollout = (status: Record<string, unknown>) =>
  live("argoproj.io/v1alpha1", "Rollout", { spec: { replicas: 3, strategy: { canary: {} } }, status });

const cronJob = (spec: Record<string, unknown>, status?: Record<string, unknown>) =>
  live("batch/v1", "CronJob", { spec: { schedule: "*/5 * * * *", ...spec }, ...(status ? { status } : {}) });

const hpa = (conditions: unknown[]) =>
  live("autoscaling/v2", "HorizontalPodAutoscaler", {
    spec: {
      minReplicas: 2,
      maxReplicas: 10,
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "shop" },
    },
    status: { currentReplicas: 2, desiredReplicas: 2, conditions },
  });

interface Case {
  name: string;
  object: KubeObject;
  expected: HealthStatus;
  message?: RegExp;
  statusOf?: StatusReporting;
}

const cases: Record<string, Case[]> = {
  "cert-manager Certificate (Issuing, then Ready)": [
    {
      name: "issued: Ready True",
      object: certificate([
        {
          type: "Ready",
          status: "True",
          reason: "Ready",
          message: "Certificate is up to date and has not expired",
        },
      ]),
      expected: "Healthy",
    },
    {
      name: "issuance failed: Ready False",
      object: certificate([
        {
          type: "Ready",
          status: "False",
          reason: "DoesNotExist",
          message: "Issuing certificate as Secret does not exist",
        },
        {
          type: "Issuing",
          status: "False",
          reason: "Failed",
          message: "The certificate request has failed to complete and will be retried",
        },
      ]),
      expected: "Degraded",
      message: /Secret does not exist/,
    },
    {
      name: "renewing: Issuing True wins over Ready",
      object: certificate([
        { type: "Ready", status: "True", reason: "Ready" },
        {
          type: "Issuing",
          status: "True",
          reason: "Renewing",
          message: "Renewing certificate as renewal was scheduled",
        },
      ]),
      expected: "Progressing",
    },
    {
      name: "no conditions yet",
      object: certificate([]),
      expected: "Progressing",
      message: /Waiting for certificate/,
    },
  ],
  "Flux HelmRelease (kstatus; Ready False while retrying)": [
    {
      name: "installed: Ready True",
      object: helmRelease([
        {
          type: "Ready",
          status: "True",
          reason: "InstallSucceeded",
          message: "Helm install succeeded for release shop/shop.v1 with chart shop@1.8.0",
        },
      ]),
      expected: "Healthy",
    },
    {
      name: "stalled after the install failed and retries ran out",
      object: helmRelease([
        {
          type: "Ready",
          status: "False",
          reason: "InstallFailed",
          message:
            "Helm install failed for release shop/shop with chart shop@1.8.0: context deadline exceeded",
        },
        {
          type: "Stalled",
          status: "True",
          reason: "RetriesExceeded",
          message: "Failed to install after 1 attempt(s)",
        },
      ]),
      expected: "Degraded",
      message: /RetriesExceeded/,
    },
    {
      name: "upgrade under way: Reconciling True",
      object: helmRelease([
        {
          type: "Reconciling",
          status: "True",
          reason: "Progressing",
          message: "Running 'upgrade' action with timeout of 5m0s",
        },
        { type: "Ready", status: "Unknown", reason: "Progressing", message: "Running 'upgrade' action" },
      ]),
      expected: "Progressing",
    },
    {
      name: "failed without Stalled: Ready False",
      object: helmRelease([
        { type: "Ready", status: "False", reason: "UpgradeFailed", message: "Helm upgrade failed" },
      ]),
      expected: "Degraded",
    },
    {
      name: "a new spec the controller has not observed yet, whatever Ready says",
      object: helmRelease([{ type: "Ready", status: "True", reason: "UpgradeSucceeded" }], 2),
      expected: "Progressing",
      message: /generation 3/,
    },
  ],
  "Argo Rollouts Rollout (status.phase, InvalidSpec)": [
    {
      name: "Healthy phase",
      object: rollout({
        observedGeneration: "3",
        phase: "Healthy",
        replicas: 3,
        updatedReplicas: 3,
        availableReplicas: 3,
      }),
      expected: "Healthy",
    },
    {
      name: "Degraded phase: the canary exceeded its progress deadline",
      object: rollout({
        observedGeneration: "3",
        phase: "Degraded",
        message: 'ProgressDeadlineExceeded: ReplicaSet "shop-6b8f" has timed out progressing.',
      }),
      expected: "Degraded",
      message: /ProgressDeadlineExceeded/,
    },
    {
      name: "Paused phase",
      object: rollout({ observedGeneration: "3", phase: "Paused", message: "CanaryPauseStep" }),
      expected: "Suspended",
    },
    {
      name: "an invalid spec",
      object: rollout({
        conditions: [
          {
            type: "InvalidSpec",
            status: "True",
            message:
              'The Rollout "shop" is invalid: spec.strategy.canary.steps[0].setWeight: Invalid value: 110',
          },
        ],
      }),
      expected: "Degraded",
    },
    {
      name: "generation not observed yet (written as a string)",
      object: rollout({ observedGeneration: "2", phase: "Healthy" }),
      expected: "Progressing",
    },
  ],
  CronJob: [
    { name: "suspended", object: cronJob({ suspend: true }, {}), expected: "Suspended" },
    { name: "never scheduled", object: cronJob({}, {}), expected: "Healthy" },
    {
      name: "last run succeeded",
      object: cronJob({}, { lastScheduleTime: T(5), lastSuccessfulTime: T(6) }),
      expected: "Healthy",
    },
    {
      name: "last run failed",
      object: cronJob({}, { lastScheduleTime: T(10), lastSuccessfulTime: T(6) }),
      expected: "Degraded",
    },
    {
      name: "a run in progress",
      object: cronJob(
        {},
        { lastScheduleTime: T(10), lastSuccessfulTime: T(6), active: [{ name: "shop-29123" }] },
      ),
      expected: "Healthy",
    },
  ],
  HorizontalPodAutoscaler: [
    {
      name: "able to scale",
      object: hpa([
        {
          type: "AbleToScale",
          status: "True",
          reason: "ReadyForNewScale",
          message: "recommended size matches current size",
        },
      ]),
      expected: "Healthy",
    },
    {
      name: "cannot get its target's scale",
      object: hpa([
        {
          type: "AbleToScale",
          status: "False",
          reason: "FailedGetScale",
          message: "the HPA controller was unable to get the target's current scale",
        },
      ]),
      expected: "Degraded",
    },
    { name: "no conditions yet", object: hpa([]), expected: "Progressing" },
  ],
  PodDisruptionBudget: [
    {
      name: "sufficient pods",
      object: live("policy/v1", "PodDisruptionBudget", {
        status: { conditions: [{ type: "DisruptionAllowed", status: "True", reason: "SufficientPods" }] },
      }),
      expected: "Healthy",
    },
    {
      name: "too few pods is a valid state",
      object: live("policy/v1", "PodDisruptionBudget", {
        status: { conditions: [{ type: "DisruptionAllowed", status: "False", reason: "InsufficientPods" }] },
      }),
      expected: "Healthy",
    },
    {
      name: "the controller failed",
      object: live("policy/v1", "PodDisruptionBudget", {
        status: { conditions: [{ type: "DisruptionAllowed", status: "False", reason: "SyncFailed" }] },
      }),
      expected: "Degraded",
    },
  ],
  APIService: [
    {
      name: "available",
      object: live("apiregistration.k8s.io/v1", "APIService", {
        status: {
          conditions: [{ type: "Available", status: "True", reason: "Passed", message: "all checks passed" }],
        },
      }),
      expected: "Healthy",
    },
    {
      name: "service not found",
      object: live("apiregistration.k8s.io/v1", "APIService", {
        status: {
          conditions: [
            {
              type: "Available",
              status: "False",
              reason: "ServiceNotFound",
              message: 'service/metrics-server in "kube-system" is not present',
            },
          ],
        },
      }),
      expected: "Progressing",
      message: /ServiceNotFound/,
    },
  ],
  "any other kind: the conventions": [
    {
      name: "status.phase Failed",
      object: live("example.acme.io/v1", "Database", { status: { phase: "Failed", message: "disk full" } }),
      expected: "Degraded",
      message: /disk full/,
    },
    {
      name: "status.phase Running",
      object: live("example.acme.io/v1", "Database", { status: { phase: "Running" } }),
      expected: "Healthy",
    },
    {
      name: "status.phase Provisioning",
      object: live("example.acme.io/v1", "Database", { status: { phase: "Provisioning" } }),
      expected: "Progressing",
    },
    {
      name: "a phase Ferry does not know is not read as done",
      object: live("example.acme.io/v1", "Database", { status: { phase: "Rebalancing" } }),
      expected: "Progressing",
      message: /Rebalancing/,
    },
    {
      name: "Ready False",
      object: live("example.acme.io/v1", "Database", {
        status: { conditions: [{ type: "Ready", status: "False", reason: "BackupFailed" }] },
      }),
      expected: "Degraded",
    },
    {
      name: "a status with nothing conventional in it has reported",
      object: live("example.acme.io/v1", "Database", { status: { endpoint: "db.shop:5432" } }),
      expected: "Healthy",
    },
  ],
  silence: [
    {
      name: "no status yet on a kind that reports status: Progressing until it speaks",
      object: live("example.acme.io/v1", "Database", { spec: {} }),
      expected: "Progressing",
      statusOf: "reports",
      message: /report status/,
    },
    {
      name: "a kind that never carries status (ServiceMonitor): Healthy once it exists",
      object: live("monitoring.coreos.com/v1", "ServiceMonitor", { spec: { endpoints: [{ port: "web" }] } }),
      expected: "Healthy",
      statusOf: "silent",
    },
    {
      name: "the opt-out annotation: Healthy once it exists, whatever its status",
      object: live(
        "example.acme.io/v1",
        "Database",
        { status: { phase: "Failed" } },
        { annotations: { "ferry.dev/health": "ignore" } },
      ),
      expected: "Healthy",
      statusOf: "reports",
    },
    {
      name: "Argo CD's spelling of the opt-out",
      object: live(
        "example.acme.io/v1",
        "Database",
        { spec: {} },
        { annotations: { "argocd.argoproj.io/ignore-healthcheck": "true" } },
      ),
      expected: "Healthy",
      statusOf: "reports",
    },
    {
      name: "an object being deleted",
      object: live("v1", "ConfigMap", { data: {} }, { deletionTimestamp: T(1) }),
      expected: "Progressing",
      message: /deletion/,
    },
  ],
};

/** A status block of Argo CD's health test data (test/fixtures/health/README.md names each source). */
const argoStatus = (file: string) =>
  parse(readFileSync(new URL(`../fixtures/health/${file}.yaml`, import.meta.url), "utf8")) as {
    status: Record<string, unknown>;
  };

describe("Argo CD's degraded test data reads Degraded", () => {
  it.each([
    ["certificate-degraded-config-error", "cert-manager.io/v1", "Certificate", /no ACME solver/],
    ["helmrelease-degraded", "helm.toolkit.fluxcd.io/v2", "HelmRelease", /RollbackSucceeded/],
    ["rollout-degraded-timeout", "argoproj.io/v1alpha1", "Rollout", /timed out progressing/],
  ])("%s", (file, apiVersion, kind, message) => {
    const verdict = assessHealth(
      live(apiVersion, kind, { spec: {}, ...argoStatus(file) }, { generation: 1 }),
    );
    expect(verdict.status).toBe("Degraded");
    expect(verdict.message).toMatch(message);
  });
});

describe("health of any kind", () => {
  for (const [kind, rows] of Object.entries(cases)) {
    describe(kind, () => {
      for (const { name, object, expected, message, statusOf } of rows) {
        it(`${name}: ${expected}`, () => {
          const verdict = assessHealth(object, () => statusOf);
          expect(verdict.status).toBe(expected);
          if (message) expect(verdict.message).toMatch(message);
        });
      }
    });
  }
});
