import { describe, expect, it } from "vitest";
import { readDeploymentStatus } from "../../src/core/deployment-status.js";
import { deploymentReportOf, truncateDescription } from "../../src/reconciler/deployment-report.js";
import type { CycleResult } from "../../src/reconciler/reconcile-cycle.js";
import type { ObjectStatus } from "../../src/reconciler/types.js";

const web = (
  health: ObjectStatus["health"],
  message = "",
  sync: ObjectStatus["sync"] = "Synced",
): ObjectStatus => ({
  ref: { group: "apps", version: "v1", kind: "Deployment", namespace: "shop", name: "web" },
  sync,
  health,
  message,
});

function result(overrides: Partial<CycleResult>): CycleResult {
  return {
    ok: true,
    phase: "done",
    revision: "a".repeat(40),
    applied: [],
    pruned: [],
    sync: "Synced",
    health: "Healthy",
    objects: [web("Healthy")],
    errors: [],
    transient: false,
    writes: 0,
    ...overrides,
  };
}

describe("deploymentReportOf", () => {
  it("reports success when Synced and Healthy", () => {
    expect(deploymentReportOf(result({}))).toEqual({
      revision: "a".repeat(40),
      state: "success",
      description: "Synced and Healthy: 1 objects",
    });
  });

  it("reports in_progress while a rollout is Progressing", () => {
    const report = deploymentReportOf(
      result({
        health: "Progressing",
        objects: [
          web("Progressing", "Waiting for rollout to finish: 1 of 2 updated replicas are available..."),
        ],
      }),
    );
    expect(report?.state).toBe("in_progress");
    expect(report?.description).toMatch(/Deployment\.apps shop\/web: Waiting for rollout/);
  });

  it("reports failure for a Degraded object, naming it", () => {
    const report = deploymentReportOf(
      result({
        health: "Degraded",
        objects: [web("Degraded", 'Deployment "web" exceeded its progress deadline')],
      }),
    );
    expect(report).toMatchObject({
      state: "failure",
      description: 'Degraded: Deployment.apps shop/web: Deployment "web" exceeded its progress deadline',
    });
  });

  it("reports failure when the cycle failed on the revision", () => {
    const report = deploymentReportOf(
      result({
        ok: false,
        phase: "render",
        errors: ["render: web.yaml: metadata.name is missing"],
        sync: "Unknown",
        health: "Degraded",
        objects: [],
      }),
    );
    expect(report?.state).toBe("failure");
    expect(report?.description).toMatch(/^render failed: /);
  });

  it("reports nothing when there is no revision to attach it to", () => {
    expect(
      deploymentReportOf(
        result({ ok: false, phase: "fetch", revision: undefined, errors: ["fetch: unreachable"] }),
      ),
    ).toBeUndefined();
  });

  it("keeps a tripped circuit breaker in progress rather than failed: nothing broke, a human must decide", () => {
    const report = deploymentReportOf(
      result({
        ok: false,
        sync: "OutOfSync",
        errors: ["prune: refusing to prune 12 objects in one cycle (limit --max-prune 10)"],
      }),
    );
    expect(report?.state).toBe("in_progress");
  });
});

describe("the drift a Deployment status carries, read back by the app", () => {
  const replicas = {
    at: "2026-12-01T00:00:00.000Z",
    object: "Deployment.apps shop/web",
    field: "spec.replicas",
    live: "1",
    git: "3",
    manager: "kubectl-scale",
  };
  const read = (report: ReturnType<typeof deploymentReportOf>) =>
    readDeploymentStatus({ state: report!.state, description: report!.description, sha: "a", at: "t" });

  it("says how many manual changes were undone in the last 24 h, and the app reads Synced, Healthy and that count", () => {
    const report = deploymentReportOf(result({ drift: { undone: [replicas], left: [] } }), {
      undoneLastDay: 2,
    });
    // The day's count comes first: GitHub's 140-character limit may cut the detail, never the count.
    expect(report?.description).toMatch(
      /^Synced and Healthy: 1 objects; 2 manual changes undone in the last 24 h, last: Deployment\.apps shop\/web spec\.replicas 1 → 3/,
    );
    expect(report!.description.length).toBeLessThan(140);
    expect(read(report)).toMatchObject({
      sync: "Synced",
      health: "Healthy",
      drift: "2 manual changes undone in the last 24 h",
    });
    // A later cycle with nothing new still carries the day's count.
    expect(read(deploymentReportOf(result({}), { undoneLastDay: 2 }))?.drift).toBe(
      "2 manual changes undone in the last 24 h",
    );
    expect(read(deploymentReportOf(result({})))?.drift).toBeUndefined();
  });

  it("reads a rollout in progress and drift left in place with self-heal off", () => {
    const progressing = deploymentReportOf(
      result({ health: "Progressing", objects: [web("Progressing", "Waiting for rollout")] }),
      { undoneLastDay: 1 },
    );
    expect(read(progressing)).toMatchObject({
      sync: "Synced",
      health: "Progressing",
      drift: "1 manual change undone in the last 24 h",
    });
    const left = deploymentReportOf(result({ sync: "OutOfSync", drift: { undone: [], left: [replicas] } }));
    expect(read(left)).toMatchObject({
      sync: "OutOfSync",
      drift:
        "left in place (self-heal off): Deployment.apps shop/web spec.replicas is 1 in the cluster, 3 in Git (by kubectl-scale)",
    });
    const degraded = deploymentReportOf(result({ health: "Degraded", objects: [web("Degraded", "crash")] }));
    expect(read(degraded)).toMatchObject({ health: "Degraded" });
  });
});

describe("truncateDescription", () => {
  it("keeps descriptions under GitHub's 140-character limit, on one line", () => {
    const long = truncateDescription(`line one\n${"x".repeat(300)}`);
    expect(long.length).toBeLessThan(140);
    expect(long).not.toContain("\n");
    expect(long.endsWith("…")).toBe(true);
  });
});
