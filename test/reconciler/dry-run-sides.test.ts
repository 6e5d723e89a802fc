import { describe, expect, it } from "vitest";
import { diffEnvironment } from "../../src/core/diff/index.js";
import { dryRunSides } from "../../src/reconciler/dry-run-sides.js";
import { inventoryKey, refOf } from "../../src/reconciler/object-ref.js";
import type { ObservedObject, SyncPlan } from "../../src/reconciler/plan.js";
import type { KubeObject } from "../../src/reconciler/types.js";

const configMap = (name: string, value: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "shop", ...extra },
  data: { value },
});

describe("dryRunSides", () => {
  it("puts the live objects against the dry-run answers, a create as rendered and a prune as gone", () => {
    const changedLive = configMap("changed", "old", { resourceVersion: "7", uid: "u1" });
    const changedDryRun = configMap("changed", "new", { resourceVersion: "7", uid: "u1" });
    const same = configMap("same", "v", { resourceVersion: "3" });
    const created = configMap("created", "v");
    const orphan = configMap("orphan", "v", { resourceVersion: "9" });
    const desired = [changedDryRun, same, created].map((object) => ({
      ref: refOf(object),
      object: { ...object, metadata: { ...object.metadata, resourceVersion: undefined } } as KubeObject,
      source: "env",
    }));
    const observed = new Map<string, ObservedObject>([
      [inventoryKey(refOf(changedLive)), { live: changedLive, dryRun: changedDryRun }],
      [inventoryKey(refOf(same)), { live: same, dryRun: same }],
      [inventoryKey(refOf(created)), {}],
    ]);
    const plan = { prune: [refOf(orphan)] } as unknown as SyncPlan;
    const sides = dryRunSides(plan, {
      desired,
      observed,
      orphansLive: new Map([[inventoryKey(refOf(orphan)), orphan]]),
    });
    const diff = diffEnvironment(sides.live, sides.desired, { labels: { base: "live", head: "desired" } });
    expect(diff.changes.map((change) => `${change.kind} ${change.key.name}`)).toEqual([
      "changed changed",
      "added created",
      "removed orphan",
    ]);
    expect(diff.unchanged).toBe(1);
    expect(diff.changes[0]!.unifiedDiff).toContain(
      "--- live/v1/ConfigMap/shop/changed\n+++ desired/v1/ConfigMap/shop/changed",
    );
    expect(diff.dangers.map((danger) => danger.detail)).toEqual(["ConfigMap shop/orphan would be pruned"]);
  });
});
