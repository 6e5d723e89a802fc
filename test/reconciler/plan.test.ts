import { describe, expect, it } from "vitest";
import { prepareDesiredState, scopeResolver } from "../../src/reconciler/desired-state.js";
import {
  inventoryKey,
  parseInventoryEntry,
  formatInventoryEntry,
  refOf,
} from "../../src/reconciler/object-ref.js";
import {
  circuitBreakerVerdict,
  DEFAULT_PRUNE_OPTIONS,
  formatSyncPlan,
  planSync,
  type ObservedObject,
  type PruneOptions,
} from "../../src/reconciler/plan.js";
import type { KubeObject, ObjectRef } from "../../src/reconciler/types.js";

const configMap = (
  name: string,
  data: Record<string, string> = {},
  metadata: Record<string, unknown> = {},
): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "shop", ...metadata },
  data,
});

const desiredOf = (objects: KubeObject[]) =>
  prepareDesiredState(
    objects.map((object) => ({ object, source: "test.yaml" })),
    () => true,
    { instance: "staging", defaultNamespace: "shop" },
  );

/** What the API server returns for an object: the desired object plus server-owned fields. */
const asLive = (object: KubeObject, resourceVersion = "1"): KubeObject => ({
  ...structuredClone(object),
  metadata: {
    ...structuredClone(object.metadata),
    resourceVersion,
    uid: "u-1",
    managedFields: [{ manager: "ferry" }],
    generation: 1,
  },
  status: {},
});

function plan(options: {
  desired: KubeObject[];
  live?: KubeObject[];
  inventory?: ObjectRef[];
  orphansLive?: KubeObject[];
  prune?: Partial<PruneOptions>;
}) {
  const desired = desiredOf(options.desired);
  const liveByKey = new Map((options.live ?? []).map((object) => [inventoryKey(refOf(object)), object]));
  const observed = new Map<string, ObservedObject>();
  for (const { ref, object } of desired) {
    const live = liveByKey.get(inventoryKey(ref));
    // The dry-run of an unchanged object is the live object with a new resourceVersion.
    observed.set(inventoryKey(ref), live ? { live, dryRun: asLive(object, "2") } : {});
  }
  const orphansLive = new Map<string, KubeObject | undefined>();
  const desiredKeys = new Set(desired.map(({ ref }) => inventoryKey(ref)));
  for (const ref of options.inventory ?? []) {
    if (desiredKeys.has(inventoryKey(ref))) continue;
    orphansLive.set(
      inventoryKey(ref),
      options.orphansLive?.find((object) => inventoryKey(refOf(object)) === inventoryKey(ref)),
    );
  }
  return planSync({
    instance: "staging",
    desired,
    observed,
    inventory: options.inventory ?? [],
    orphansLive,
    options: { ...DEFAULT_PRUNE_OPTIONS, ...options.prune },
  });
}

const labelled = (object: KubeObject) => desiredOf([object])[0]!.object;

describe("planSync", () => {
  it("creates objects that are not in the cluster", () => {
    const result = plan({ desired: [configMap("a")] });
    expect(result.apply.map((item) => [item.action, item.ref.name])).toEqual([["create", "a"]]);
    expect(result.nextInventory.map((ref) => ref.name)).toEqual(["a"]);
  });

  it("leaves an object alone when the dry-run result equals the live object apart from server-owned fields", () => {
    const live = asLive(labelled(configMap("a", { k: "v" })));
    const result = plan({ desired: [configMap("a", { k: "v" })], live: [live] });
    expect(result.apply).toEqual([]);
    expect(result.unchanged.map((ref) => ref.name)).toEqual(["a"]);
  });

  it("updates an object whose live state differs, naming the changed path", () => {
    const live = asLive(labelled(configMap("a", { k: "old" })));
    const result = plan({ desired: [configMap("a", { k: "new" })], live: [live] });
    expect(result.apply.map((item) => [item.action, item.changedPaths])).toEqual([["update", ["data.k"]]]);
  });

  it("adopts an unlabelled live object by applying Ferry's labels", () => {
    const result = plan({ desired: [configMap("a")], live: [asLive(configMap("a"))] });
    expect(result.apply[0]?.changedPaths).toEqual(expect.arrayContaining(["metadata.labels"]));
  });

  it("does not prune when --prune is off, but keeps the orphan in the inventory", () => {
    const orphan = asLive(labelled(configMap("gone")));
    const result = plan({ desired: [configMap("a")], inventory: [refOf(orphan)], orphansLive: [orphan] });
    expect(result.prune).toEqual([]);
    expect(result.keep).toEqual([{ ref: refOf(orphan), reason: "prune-off" }]);
    expect(result.nextInventory.map((ref) => ref.name)).toEqual(["a", "gone"]);
  });

  it("prunes an inventory member that left Git when --prune is on", () => {
    const orphan = asLive(labelled(configMap("gone")));
    const result = plan({
      desired: [configMap("a")],
      inventory: [refOf(orphan)],
      orphansLive: [orphan],
      prune: { prune: true },
    });
    expect(result.prune.map((ref) => ref.name)).toEqual(["gone"]);
    expect(result.nextInventory.map((ref) => ref.name)).toEqual(["a"]);
  });

  it("never prunes an object annotated ferry.dev/prune: disabled, and stops managing it", () => {
    const orphan = asLive(
      labelled(configMap("keep", {}, { annotations: { "ferry.dev/prune": "disabled" } })),
    );
    const result = plan({
      desired: [configMap("a")],
      inventory: [refOf(orphan)],
      orphansLive: [orphan],
      prune: { prune: true },
    });
    expect(result.prune).toEqual([]);
    expect(result.keep).toEqual([{ ref: refOf(orphan), reason: "prune-disabled" }]);
    expect(result.nextInventory.map((ref) => ref.name)).toEqual(["a"]);
  });

  it("never prunes an object with ownerReferences or one labelled for another instance", () => {
    const owned = asLive(
      labelled(configMap("owned", {}, { ownerReferences: [{ kind: "Deployment", name: "x" }] })),
    );
    const other = asLive(configMap("other", {}, { labels: { "ferry.dev/instance": "prod" } }));
    const result = plan({
      desired: [configMap("a")],
      inventory: [refOf(owned), refOf(other)],
      orphansLive: [owned, other],
      prune: { prune: true },
    });
    expect(result.prune).toEqual([]);
    expect(result.keep.map(({ reason }) => reason).sort()).toEqual([
      "has-owner",
      "owned-by-another-instance",
    ]);
  });

  it("never prunes an inventory member that no longer carries this instance's label (label plus inventory)", () => {
    const detached = asLive(configMap("detached"));
    const result = plan({
      desired: [configMap("a")],
      inventory: [refOf(detached)],
      orphansLive: [detached],
      prune: { prune: true },
    });
    expect(result.prune).toEqual([]);
    expect(result.keep).toEqual([{ ref: refOf(detached), reason: "unlabelled" }]);
    expect(result.nextInventory.map((ref) => ref.name)).toEqual(["a"]);
  });

  it("drops inventory members that are already gone from the cluster", () => {
    const gone = labelled(configMap("gone"));
    const result = plan({ desired: [configMap("a")], inventory: [refOf(gone)], prune: { prune: true } });
    expect(result.prune).toEqual([]);
    expect(result.nextInventory.map((ref) => ref.name)).toEqual(["a"]);
  });

  it("refuses to prune everything on an empty render unless --allow-empty", () => {
    const orphan = asLive(labelled(configMap("gone")));
    expect(() =>
      plan({ desired: [], inventory: [refOf(orphan)], orphansLive: [orphan], prune: { prune: true } }),
    ).toThrow(/empty/);
    const allowed = plan({
      desired: [],
      inventory: [refOf(orphan)],
      orphansLive: [orphan],
      prune: { prune: true, allowEmpty: true, maxPrunePercent: 100 },
    });
    expect(allowed.prune.map((ref) => ref.name)).toEqual(["gone"]);
  });

  it("treats a render that is empty but for the --create-namespace Namespace as empty", () => {
    const orphan = asLive(labelled(configMap("gone")));
    const desired = prepareDesiredState([], () => false, {
      instance: "staging",
      defaultNamespace: "shop",
      createNamespace: true,
    });
    expect(() =>
      planSync({
        instance: "staging",
        desired,
        observed: new Map(),
        inventory: [refOf(orphan), desired[0]!.ref],
        orphansLive: new Map([[inventoryKey(refOf(orphan)), orphan]]),
        options: { ...DEFAULT_PRUNE_OPTIONS, prune: true },
      }),
    ).toThrow(/empty/);
  });

  it("trips the circuit breaker on a mass deletion: nothing is pruned and the orphans stay in the inventory", () => {
    const orphans = Array.from({ length: 12 }, (_, index) =>
      asLive(labelled(configMap(`old-${String(index).padStart(2, "0")}`))),
    );
    const result = plan({
      desired: [configMap("a")],
      inventory: orphans.map(refOf),
      orphansLive: orphans,
      prune: { prune: true, maxPrunePercent: 100 },
    });
    expect(result.prune).toEqual([]);
    expect(result.pruneBlocked).toMatch(/refusing to prune 12 objects/);
    // The new object is not created while the breaker holds the change (it is not in the inventory).
    expect(result.nextInventory).toHaveLength(12);
    expect(result.held.map(({ name }) => name)).toEqual(["a"]);
    expect(result.keep.every(({ reason }) => reason === "circuit-breaker")).toBe(true);
  });

  it("prints the plan for --dry-run", () => {
    const orphan = asLive(labelled(configMap("gone")));
    const result = plan({
      desired: [configMap("a")],
      inventory: [refOf(orphan)],
      orphansLive: [orphan],
      prune: { prune: true },
    });
    expect(formatSyncPlan(result)).toBe(
      "create ConfigMap shop/a\nprune ConfigMap shop/gone\n1 to apply, 0 unchanged, 1 to prune\n",
    );
  });
});

describe("circuitBreakerVerdict", () => {
  const options = { ...DEFAULT_PRUNE_OPTIONS, prune: true };

  it("allows a deletion within both limits", () => {
    expect(circuitBreakerVerdict(3, 20, options)).toBeUndefined();
  });

  it("refuses more than --max-prune objects", () => {
    expect(circuitBreakerVerdict(11, 1000, options)).toMatch(/--max-prune 10/);
  });

  it("refuses more than --max-prune-percent of the inventory", () => {
    expect(circuitBreakerVerdict(4, 10, options)).toMatch(/4 of 10 .*--max-prune-percent 30/);
  });

  it("always allows one deletion, however small the inventory", () => {
    expect(circuitBreakerVerdict(1, 2, options)).toBeUndefined();
  });
});

describe("prepareDesiredState", () => {
  it("adds Ferry's ownership labels and keeps the user's", () => {
    const [first] = desiredOf([configMap("a", {}, { labels: { app: "shop" } })]);
    expect(first?.object.metadata.labels).toEqual({
      app: "shop",
      "app.kubernetes.io/managed-by": "ferry",
      "ferry.dev/instance": "staging",
    });
  });

  it("puts namespaced objects without a namespace into the default namespace, and strips it from cluster-scoped ones", () => {
    const objects: KubeObject[] = [
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a" } },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "r", namespace: "oops" },
      },
    ];
    const isNamespaced = scopeResolver(objects, () => undefined);
    const desired = prepareDesiredState(
      objects.map((object) => ({ object, source: "x" })),
      isNamespaced,
      { instance: "i", defaultNamespace: "team" },
    );
    expect(desired.map(({ ref }) => `${ref.kind}:${ref.namespace}`)).toEqual([
      "ClusterRole:",
      "ConfigMap:team",
    ]);
  });

  it("learns the scope of custom resources from CRDs rendered alongside them", () => {
    const crd: KubeObject = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "widgets.example.com" },
      spec: { group: "example.com", names: { kind: "Widget" }, scope: "Cluster" },
    };
    const widget: KubeObject = { apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w" } };
    expect(scopeResolver([crd, widget], () => undefined)(widget)).toBe(false);
  });

  it("orders Namespaces, then CRDs, then the rest, whatever order the files came in", () => {
    const objects: KubeObject[] = [
      configMap("b"),
      {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "w.example.com" },
      },
      configMap("a"),
      { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } },
    ];
    const names = prepareDesiredState(
      objects.map((object) => ({ object, source: "x" })),
      scopeResolver(objects, () => undefined),
      {
        instance: "i",
        defaultNamespace: "shop",
      },
    ).map(({ ref }) => `${ref.kind}/${ref.name}`);
    expect(names).toEqual([
      "Namespace/shop",
      "CustomResourceDefinition/w.example.com",
      "ConfigMap/a",
      "ConfigMap/b",
    ]);
  });

  it("refuses an object defined twice", () => {
    expect(() => desiredOf([configMap("a"), configMap("a")])).toThrow(/defined twice/);
  });

  it("adds the namespace itself with --create-namespace", () => {
    const desired = prepareDesiredState([], () => true, {
      instance: "i",
      defaultNamespace: "shop",
      createNamespace: true,
    });
    expect(desired.map(({ ref }) => `${ref.kind}/${ref.name}`)).toEqual(["Namespace/shop"]);
  });
});

describe("inventory entries", () => {
  it("round-trip through their text form", () => {
    const ref: ObjectRef = {
      group: "apps",
      version: "v1",
      kind: "Deployment",
      namespace: "shop",
      name: "web",
    };
    expect(formatInventoryEntry(ref)).toBe("apps_Deployment_shop_web|v1");
    expect(parseInventoryEntry(formatInventoryEntry(ref))).toEqual(ref);
  });

  it("ignore malformed entries instead of crashing a prune", () => {
    expect(parseInventoryEntry("garbage")).toBeUndefined();
    expect(parseInventoryEntry("a_b_c|v1")).toBeUndefined();
  });
});
