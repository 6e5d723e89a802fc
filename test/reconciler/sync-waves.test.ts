import { describe, expect, it } from "vitest";
import { applyPlan } from "../../src/reconciler/apply.js";
import { prepareDesiredState } from "../../src/reconciler/desired-state.js";
import { inventoryKey, refOf } from "../../src/reconciler/object-ref.js";
import { DEFAULT_PRUNE_OPTIONS, planSync } from "../../src/reconciler/plan.js";
import type { ClusterPort } from "../../src/reconciler/ports.js";
import {
  hookOf,
  ignoresExtraneous,
  optionItems,
  propagationPolicyOf,
  pruneDisabledByOption,
  syncWaveOf,
} from "../../src/reconciler/sync-options.js";
import { waveGate } from "../../src/reconciler/sync-waves.js";
import type { KubeObject } from "../../src/reconciler/types.js";

const annotated = (annotations: Record<string, string>) => ({ metadata: { name: "x", annotations } });

const object = (
  kind: string,
  name: string,
  annotations: Record<string, string> = {},
  extra = {},
): KubeObject => ({
  apiVersion: kind === "Widget" ? "example.com/v1" : "v1",
  kind,
  metadata: { name, namespace: kind === "Namespace" ? undefined : "shop", annotations },
  ...extra,
});

describe("sync options, parsed as Argo CD parses them", () => {
  it("splits on commas, trims each item and drops empty ones", () => {
    expect(optionItems(" Prune=false , ,Validate=false,")).toEqual(["Prune=false", "Validate=false"]);
    expect(optionItems(undefined)).toEqual([]);
  });

  it("reads Prune=false from either spelling, exactly (no case folding, no partial match)", () => {
    expect(
      pruneDisabledByOption(annotated({ "argocd.argoproj.io/sync-options": "Validate=false, Prune=false" })),
    ).toBe(true);
    expect(pruneDisabledByOption(annotated({ "ferry.dev/sync-options": "Prune=false" }))).toBe(true);
    expect(pruneDisabledByOption(annotated({ "argocd.argoproj.io/sync-options": "prune=false" }))).toBe(
      false,
    );
    expect(pruneDisabledByOption(annotated({ "argocd.argoproj.io/sync-options": "Prune=falsey" }))).toBe(
      false,
    );
  });

  it("reads IgnoreExtraneous from the compare options", () => {
    expect(ignoresExtraneous(annotated({ "argocd.argoproj.io/compare-options": "IgnoreExtraneous" }))).toBe(
      true,
    );
    expect(
      ignoresExtraneous(annotated({ "ferry.dev/compare-options": "ServerSideDiff=true,IgnoreExtraneous" })),
    ).toBe(true);
    expect(ignoresExtraneous(annotated({ "argocd.argoproj.io/sync-options": "IgnoreExtraneous" }))).toBe(
      false,
    );
  });

  it("reads PrunePropagationPolicy, the Ferry spelling first, and refuses an unknown policy in one line", () => {
    expect(propagationPolicyOf(annotated({}), "Background")).toBe("Background");
    expect(
      propagationPolicyOf(
        annotated({ "argocd.argoproj.io/sync-options": "PrunePropagationPolicy=orphan" }),
        "Background",
      ),
    ).toBe("Orphan");
    expect(
      propagationPolicyOf(
        annotated({
          "argocd.argoproj.io/sync-options": "PrunePropagationPolicy=orphan",
          "ferry.dev/sync-options": "PrunePropagationPolicy=foreground",
        }),
        "Background",
      ),
    ).toBe("Foreground");
    expect(() =>
      propagationPolicyOf(
        annotated({ "ferry.dev/sync-options": "PrunePropagationPolicy=Orphan" }),
        "Background",
      ),
    ).toThrow(
      /^ferry.dev\/sync-options: PrunePropagationPolicy=Orphan is not foreground, background or orphan$/,
    );
  });

  it("reads waves as integers (Ferry's annotation wins), 0 without one, an error for anything else", () => {
    expect(syncWaveOf(annotated({}))).toEqual({ wave: 0 });
    expect(syncWaveOf(annotated({ "argocd.argoproj.io/sync-wave": "-2" }))).toEqual({ wave: -2 });
    expect(syncWaveOf(annotated({ "argocd.argoproj.io/sync-wave": "+3" }))).toEqual({ wave: 3 });
    expect(
      syncWaveOf(annotated({ "argocd.argoproj.io/sync-wave": "5", "ferry.dev/sync-wave": "1" })),
    ).toEqual({ wave: 1 });
    for (const bad of ["1.5", "one", "", " 1", "99999999999"])
      expect(syncWaveOf(annotated({ "ferry.dev/sync-wave": bad }))).toEqual({
        error: `ferry.dev/sync-wave "${bad}" is not an integer`,
      });
  });

  it("names the hook annotation of a hook", () => {
    expect(hookOf(annotated({ "helm.sh/hook": "pre-install" }))).toBe("helm.sh/hook: pre-install");
    expect(hookOf(annotated({ "argocd.argoproj.io/hook": "PreSync" }))).toBe(
      "argocd.argoproj.io/hook: PreSync",
    );
    expect(hookOf(annotated({ "argocd.argoproj.io/sync-wave": "1" }))).toBeUndefined();
  });
});

/** A cluster that records the order of writes and answers applies with the object (plus a status it is told). */
function recordingCluster(statusOf: (object: KubeObject) => unknown = () => undefined) {
  const order: string[] = [];
  const deletes: { name: string; policy?: string }[] = [];
  const cluster = {
    apply: async (object: KubeObject) => {
      order.push(object.metadata.name);
      const status = statusOf(object);
      return status === undefined ? object : { ...object, status };
    },
    delete: async (ref: { name: string }, options?: { propagationPolicy?: string }) => {
      deletes.push({
        name: ref.name,
        ...(options?.propagationPolicy ? { policy: options.propagationPolicy } : {}),
      });
    },
    isNamespaced: async () => true,
  } as unknown as ClusterPort;
  return { cluster, order, deletes };
}

const desiredOf = (objects: KubeObject[]) =>
  prepareDesiredState(
    objects.map((item) => ({ object: item, source: "test.yaml" })),
    (item: KubeObject) => item.kind !== "Namespace",
    { instance: "staging", defaultNamespace: "shop" },
  );

function createPlan(objects: KubeObject[]) {
  const desired = desiredOf(objects);
  const plan = planSync({
    instance: "staging",
    desired,
    observed: new Map(),
    inventory: [],
    orphansLive: new Map(),
    options: DEFAULT_PRUNE_OPTIONS,
  });
  return { desired, plan };
}

describe("sync waves", () => {
  it("applies waves in ascending order, keeping the kind ranks inside a wave", async () => {
    const { desired, plan } = createPlan([
      object("ConfigMap", "late", { "argocd.argoproj.io/sync-wave": "2" }),
      object("ConfigMap", "early", { "argocd.argoproj.io/sync-wave": "-1" }),
      object("Namespace", "second-wave-ns", { "ferry.dev/sync-wave": "2" }),
      object("ConfigMap", "default"),
    ]);
    const { cluster, order } = recordingCluster();
    const outcome = await applyPlan(cluster, plan, 4, 1000, waveGate(desired, new Map(), new Map()));
    expect(outcome.waiting).toBeUndefined();
    expect(order).toEqual(["early", "default", "second-wave-ns", "late"]);
  });

  it("does not start a wave while an earlier wave's object is not healthy, and names it", async () => {
    const widgets = { "example.com/Widget": "reports" as const };
    const { desired, plan } = createPlan([
      object("Widget", "database", { "argocd.argoproj.io/sync-wave": "0" }),
      object("ConfigMap", "app", { "argocd.argoproj.io/sync-wave": "1" }),
    ]);
    const { cluster, order } = recordingCluster();
    const gate = waveGate(desired, new Map(), new Map(Object.entries(widgets)));
    const outcome = await applyPlan(cluster, plan, 4, 1000, gate);
    expect(order).toEqual(["database"]);
    expect(outcome.waiting?.deferred.map((ref) => ref.name)).toEqual(["app"]);
    expect(outcome.waiting?.reason).toMatch(
      /^wave 1 waits: Widget\.example\.com shop\/database \(wave 0\) is Progressing/,
    );

    // The next cycle: the Widget reports Ready, so wave 1 goes ahead.
    const ready = { conditions: [{ type: "Ready", status: "True" }], observedGeneration: 1 };
    const next = recordingCluster((item) => (item.kind === "Widget" ? ready : undefined));
    const again = await applyPlan(next.cluster, plan, 4, 1000, gate);
    expect(again.waiting).toBeUndefined();
    expect(next.order).toEqual(["database", "app"]);
  });

  it("prunes in reverse wave order, and Prune=false keeps an object", () => {
    const live = (name: string, annotations: Record<string, string>): KubeObject => ({
      ...object("ConfigMap", name, annotations),
      metadata: {
        name,
        namespace: "shop",
        annotations,
        labels: { "ferry.dev/instance": "staging" },
      },
    });
    const orphans = [
      live("wave-0", {}),
      live("wave-5", { "argocd.argoproj.io/sync-wave": "5" }),
      live("wave-minus-1", { "argocd.argoproj.io/sync-wave": "-1" }),
      live("kept", { "argocd.argoproj.io/sync-options": "Prune=false" }),
    ];
    const plan = planSync({
      instance: "staging",
      desired: desiredOf([object("ConfigMap", "stays")]),
      observed: new Map(),
      inventory: orphans.map(refOf),
      orphansLive: new Map(orphans.map((item) => [inventoryKey(refOf(item)), item])),
      options: { ...DEFAULT_PRUNE_OPTIONS, prune: true, maxPrunePercent: 100 },
    });
    expect(plan.prune.map((ref) => ref.name)).toEqual(["wave-5", "wave-0", "wave-minus-1"]);
    expect(plan.keep).toEqual([{ ref: refOf(orphans[3]!), reason: "prune-disabled" }]);
  });
});
