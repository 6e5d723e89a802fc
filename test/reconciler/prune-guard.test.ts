import { describe, expect, it } from "vitest";
import { INSTANCE_LABEL, prepareDesiredState } from "../../src/reconciler/desired-state.js";
import { inventoryKey, refOf } from "../../src/reconciler/object-ref.js";
import { DEFAULT_PRUNE_OPTIONS, formatSyncPlan, planSync, type SyncPlan } from "../../src/reconciler/plan.js";
import type { OrphanContents } from "../../src/reconciler/prune-guard.js";
import type { KubeObject, ObjectRef } from "../../src/reconciler/types.js";

const ours = { [INSTANCE_LABEL]: "staging" };

const object = (
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
  metadata: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}), ...metadata },
});

const configMap = (name: string, namespace = "shop", metadata: Record<string, unknown> = { labels: ours }) =>
  object("v1", "ConfigMap", name, namespace, metadata);

/** A plan where every inventory member not in `desired` is live as given and pruning is on. */
function plan(input: {
  desired: KubeObject[];
  inventory: KubeObject[];
  contents?: [KubeObject, KubeObject[]][];
  maxPrune?: number;
}): SyncPlan {
  const desired = prepareDesiredState(
    input.desired.map((item) => ({ object: item, source: "test.yaml" })),
    ({ kind }) => kind !== "Namespace" && kind !== "CustomResourceDefinition",
    { instance: "staging", defaultNamespace: "shop" },
  );
  const desiredKeys = new Set(desired.map(({ ref }) => inventoryKey(ref)));
  const orphansLive = new Map<string, KubeObject | undefined>();
  for (const live of input.inventory) {
    if (!desiredKeys.has(inventoryKey(refOf(live)))) orphansLive.set(inventoryKey(refOf(live)), live);
  }
  const orphanContents: OrphanContents = new Map(
    (input.contents ?? []).map(([owner, inside]) => [
      inventoryKey(refOf(owner)),
      { objects: inside, unreadable: [] },
    ]),
  );
  return planSync({
    instance: "staging",
    desired,
    observed: new Map(),
    inventory: input.inventory.map(refOf),
    orphansLive,
    orphanContents,
    options: {
      ...DEFAULT_PRUNE_OPTIONS,
      prune: true,
      maxPrunePercent: 100,
      ...(input.maxPrune ? { maxPrune: input.maxPrune } : {}),
    },
  });
}

const names = (refs: ObjectRef[]) => refs.map((ref) => `${ref.kind} ${ref.name}`);

describe("pruning a Namespace", () => {
  const namespace = object("v1", "Namespace", "team", undefined, { labels: ours });
  const managed = configMap("settings", "team");

  it("refuses while it holds an object Ferry does not manage, keeps it managed, and says why", () => {
    const manual = configMap("manual", "team", {});
    const result = plan({
      desired: [configMap("web")],
      inventory: [namespace, managed],
      contents: [[namespace, [managed, manual]]],
    });
    expect(names(result.prune)).toEqual(["ConfigMap settings"]);
    expect(result.keep).toEqual([
      {
        ref: refOf(namespace),
        reason: "not-empty",
        detail: expect.stringMatching(/Namespace team still holds 1 object .*ConfigMap team\/manual/),
      },
    ]);
    expect(names(result.nextInventory)).toContain("Namespace team");
    expect(formatSyncPlan(result)).toMatch(/keep Namespace team \(not-empty: .*ConfigMap team\/manual/);
  });

  it("refuses while it holds an object still in Git", () => {
    const stays = configMap("stays", "team");
    const result = plan({
      desired: [stays],
      inventory: [namespace, stays],
      contents: [[namespace, [stays]]],
    });
    expect(result.prune).toEqual([]);
    expect(result.keep.map(({ reason }) => reason)).toEqual(["not-empty"]);
  });

  it("deletes it when all it holds is pruned with it or is Kubernetes' own", () => {
    const incidental = [
      object("v1", "ServiceAccount", "default", "team"),
      object("v1", "ConfigMap", "kube-root-ca.crt", "team"),
      object("v1", "Pod", "web-1", "team", { ownerReferences: [{ kind: "ReplicaSet", name: "web" }] }),
      object("v1", "Service", "web", "team", { labels: ours }),
      object("v1", "Endpoints", "web", "team"),
    ];
    const service = incidental[3]!;
    const result = plan({
      desired: [configMap("web")],
      inventory: [namespace, managed, service],
      contents: [[namespace, [managed, ...incidental]]],
    });
    expect(names(result.prune).sort()).toEqual(["ConfigMap settings", "Namespace team", "Service web"]);
    expect(result.keep).toEqual([]);
  });
});

describe("pruning a CustomResourceDefinition", () => {
  const crd = object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.acme.test", undefined, {
    labels: ours,
  });

  it("counts its custom resources against the circuit breaker", () => {
    const widgets = Array.from({ length: 11 }, (_, index) =>
      object("acme.test/v1", "Widget", `w-${index}`, "shop"),
    );
    const result = plan({
      desired: [configMap("web")],
      inventory: [crd],
      contents: [[crd, widgets]],
    });
    expect(result.prune).toEqual([]);
    expect(result.pruneBlocked).toMatch(/refusing to prune 12 objects/);
  });

  it("is pruned when its custom resources fit the budget", () => {
    const result = plan({
      desired: [configMap("web")],
      inventory: [crd],
      contents: [[crd, [object("acme.test/v1", "Widget", "w", "shop")]]],
    });
    expect(names(result.prune)).toEqual(["CustomResourceDefinition widgets.acme.test"]);
  });
});

describe("the circuit breaker after a mass rename", () => {
  const before = Array.from({ length: 12 }, (_, index) => configMap(`old-${index}`));
  const after = Array.from({ length: 12 }, (_, index) => configMap(`new-${index}`));

  it("holds the new names' creates along with the old names' deletes, so a revert has nothing left to prune", () => {
    const kept = configMap("kept");
    const tripped = plan({ desired: [...after, kept], inventory: [...before, kept] });
    expect(tripped.pruneBlocked).toMatch(/refusing to prune 12 objects/);
    expect(tripped.apply.map(({ ref }) => ref.name)).not.toContain("new-0");
    expect(names(tripped.held)).toHaveLength(12);
    expect(tripped.nextInventory.map(({ name }) => name).sort()).toEqual(
      [...before, kept].map(({ metadata }) => metadata.name).sort(),
    );
    expect(formatSyncPlan(tripped)).toMatch(/hold ConfigMap shop\/new-0 \(circuit-breaker\)/);

    // The revert, against the inventory the tripped cycle left behind.
    const reverted = plan({
      desired: [...before, kept],
      inventory: tripped.nextInventory.map((ref) => configMap(ref.name)),
    });
    expect(reverted.pruneBlocked).toBeUndefined();
    expect(reverted.held).toEqual([]);
    expect(reverted.keep).toEqual([]);
  });
});

describe("refusing what cannot be seen", () => {
  it("keeps a Namespace when a kind in it cannot be listed", () => {
    const namespace = object("v1", "Namespace", "team", undefined, { labels: ours });
    const desired = prepareDesiredState([{ object: configMap("web"), source: "x" }], () => true, {
      instance: "staging",
      defaultNamespace: "shop",
    });
    const result = planSync({
      instance: "staging",
      desired,
      observed: new Map(),
      inventory: [refOf(namespace)],
      orphansLive: new Map([[inventoryKey(refOf(namespace)), namespace]]),
      orphanContents: new Map([
        [inventoryKey(refOf(namespace)), { objects: [], unreadable: ["Secret (v1)"] }],
      ]),
      options: { ...DEFAULT_PRUNE_OPTIONS, prune: true },
    });
    expect(result.prune).toEqual([]);
    expect(result.keep[0]?.detail).toMatch(
      /cannot tell what Namespace team holds: no permission to list Secret \(v1\)/,
    );
  });
});
