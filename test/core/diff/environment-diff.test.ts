import { describe, expect, it } from "vitest";
import { diffEnvironment, type KubeObject } from "../../../src/core/diff/index.js";

const deployment = (image: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "shop", labels: { app: "web" } },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        initContainers: [{ name: "migrate", image }],
        containers: [
          { name: "web", image },
          { name: "proxy", image: "envoyproxy/envoy:v1.31.0" },
        ],
      },
    },
    ...extra,
  },
});
const object = (
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
  rest = {},
): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}) },
  ...rest,
});
const configMap = (name: string, data: Record<string, string>) =>
  object("v1", "ConfigMap", name, "shop", { data });

const DIGEST_A = `sha256:${"a".repeat(64)}`;
const DIGEST_B = `sha256:${"b".repeat(64)}`;

describe("diffEnvironment", () => {
  it("finds nothing between equal renders, whatever the order of objects and keys", () => {
    const base = [deployment("ghcr.io/acme/shop:1.7.3"), configMap("settings", { a: "1", b: "2" })];
    const head = [configMap("settings", { b: "2", a: "1" }), deployment("ghcr.io/acme/shop:1.7.3")];
    expect(diffEnvironment(base, head)).toEqual({ changes: [], images: [], dangers: [], unchanged: 2 });
  });

  it("ignores what the API server and Ferry's reconciler write", () => {
    const live: KubeObject = {
      ...configMap("settings", { a: "1" }),
      status: { phase: "whatever" },
    };
    live.metadata = {
      ...live.metadata,
      uid: "4b1c",
      resourceVersion: "812",
      generation: 3,
      creationTimestamp: "2026-01-01T00:00:00Z",
      managedFields: [{ manager: "ferry" }],
      labels: { "ferry.dev/instance": "prod", "app.kubernetes.io/managed-by": "ferry" },
      annotations: { "kubectl.kubernetes.io/last-applied-configuration": "{}" },
    };
    expect(diffEnvironment([live], [configMap("settings", { a: "1" })]).unchanged).toBe(1);
    // A managed-by label someone else set is theirs, and a difference.
    const helm = configMap("settings", { a: "1" });
    helm.metadata.labels = { "app.kubernetes.io/managed-by": "Helm" };
    expect(diffEnvironment([helm], [configMap("settings", { a: "1" })]).changes).toHaveLength(1);
  });

  it("reports a changed object with a unified diff and its image change, digests included", () => {
    const diff = diffEnvironment(
      [deployment(`ghcr.io/acme/shop:1.7.3@${DIGEST_A}`)],
      [deployment(`ghcr.io/acme/shop:1.8.0@${DIGEST_B}`)],
    );
    expect(diff.dangers).toEqual([]);
    expect(diff.changes).toHaveLength(1);
    expect(diff.changes[0]).toMatchObject({
      kind: "changed",
      key: { apiVersion: "apps/v1", kind: "Deployment", namespace: "shop", name: "web" },
    });
    const lines = diff.changes[0]!.unifiedDiff!.split("\n");
    expect(lines.slice(0, 2)).toEqual([
      "--- base/apps/v1/Deployment/shop/web",
      "+++ head/apps/v1/Deployment/shop/web",
    ]);
    expect(lines).toContain(`-          image: ghcr.io/acme/shop:1.7.3@${DIGEST_A}`);
    expect(lines).toContain(`+          image: ghcr.io/acme/shop:1.8.0@${DIGEST_B}`);
    expect(lines.filter((line) => /^[-+] /.test(line))).toHaveLength(4);
    expect(diff.images).toEqual([
      {
        name: "ghcr.io/acme/shop",
        container: "migrate",
        from: "1.7.3",
        to: "1.8.0",
        fromDigest: DIGEST_A,
        toDigest: DIGEST_B,
        object: diff.changes[0]!.key,
      },
      expect.objectContaining({ container: "web", from: "1.7.3", to: "1.8.0" }),
    ]);
  });

  it("finds images in every workload kind's Pod template", () => {
    const template = (image: string) => ({ spec: { containers: [{ name: "c", image }] } });
    const kinds = (image: string): KubeObject[] => [
      object("v1", "Pod", "p", "ns", { spec: template(image).spec }),
      ...["StatefulSet", "DaemonSet", "ReplicaSet"].map((kind) =>
        object("apps/v1", kind, "w", "ns", { spec: { template: template(image) } }),
      ),
      object("batch/v1", "Job", "j", "ns", { spec: { template: template(image) } }),
      object("batch/v1", "CronJob", "cj", "ns", {
        spec: { jobTemplate: { spec: { template: template(image) } } },
      }),
      object("v1", "ConfigMap", "not-a-workload", "ns", { spec: template(image) }),
    ];
    const diff = diffEnvironment(kinds("app:1"), kinds("app:2"));
    expect(diff.images.map((image) => image.object.kind).sort()).toEqual(
      ["CronJob", "DaemonSet", "Job", "Pod", "ReplicaSet", "StatefulSet"].sort(),
    );
    // Immutable fields: the Job's template changing is a danger too.
    expect(diff.dangers.map((danger) => `${danger.reason} ${danger.object?.kind}`)).toEqual([
      "immutable-field Job",
    ]);
  });

  it("treats an apiVersion bump as a change of the same object", () => {
    const diff = diffEnvironment(
      [object("autoscaling/v2beta2", "HorizontalPodAutoscaler", "web", "shop", { spec: { maxReplicas: 3 } })],
      [object("autoscaling/v2", "HorizontalPodAutoscaler", "web", "shop", { spec: { maxReplicas: 3 } })],
    );
    expect(diff.changes.map((change) => change.kind)).toEqual(["changed"]);
    expect(diff.changes[0]!.unifiedDiff).toContain(
      "-apiVersion: autoscaling/v2beta2\n+apiVersion: autoscaling/v2",
    );
  });

  it("calls every removed object a prune, and names what a Namespace, CRD or PVC takes with it", () => {
    const base = [
      object("v1", "Namespace", "shop"),
      object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.acme.io"),
      object("v1", "PersistentVolumeClaim", "data", "shop", { spec: { accessModes: ["ReadWriteOnce"] } }),
      configMap("settings", { a: "1" }),
      configMap("kept", { a: "1" }),
    ];
    const diff = diffEnvironment(base, [configMap("kept", { a: "1" })]);
    expect(diff.changes.map((change) => `${change.kind} ${change.key.kind}`)).toEqual([
      "removed ConfigMap",
      "removed Namespace",
      "removed PersistentVolumeClaim",
      "removed CustomResourceDefinition",
    ]);
    expect(diff.changes.every((change) => change.unifiedDiff?.includes("+++ /dev/null"))).toBe(true);
    expect(diff.dangers.map((danger) => danger.reason).sort()).toEqual(
      ["deletes-crd", "deletes-namespace", "deletes-pvc", "prune", "prune", "prune", "prune"].sort(),
    );
    expect(diff.dangers.map((danger) => danger.detail)).toContain("ConfigMap shop/settings would be pruned");
    expect(diff.unchanged).toBe(1);
  });

  it("says so when head renders nothing while base rendered objects", () => {
    const diff = diffEnvironment([configMap("a", {}), configMap("b", {})], []);
    expect(diff.dangers[0]).toEqual({
      reason: "renders-empty",
      detail: "head renders no objects at all (base had 2): applying it would prune everything",
    });
    expect(diffEnvironment([], []).dangers).toEqual([]);
    expect(diffEnvironment([], [configMap("a", {})]).dangers).toEqual([]);
  });

  it.each([
    [
      "a Deployment's selector",
      deployment("x:1"),
      deployment("x:1", { selector: { matchLabels: { app: "web2" } } }),
      "spec.selector",
    ],
    [
      "a Service's clusterIP set on both",
      object("v1", "Service", "web", "shop", { spec: { clusterIP: "10.0.0.1" } }),
      object("v1", "Service", "web", "shop", { spec: { clusterIP: "10.0.0.2" } }),
      "spec.clusterIP",
    ],
    [
      "a StatefulSet's volumeClaimTemplates",
      object("apps/v1", "StatefulSet", "db", "shop", {
        spec: { volumeClaimTemplates: [{ metadata: { name: "a" } }] },
      }),
      object("apps/v1", "StatefulSet", "db", "shop", {
        spec: { volumeClaimTemplates: [{ metadata: { name: "b" } }] },
      }),
      "spec.volumeClaimTemplates",
    ],
    [
      "a PVC's storageClassName",
      object("v1", "PersistentVolumeClaim", "d", "shop", { spec: { storageClassName: "fast" } }),
      object("v1", "PersistentVolumeClaim", "d", "shop", { spec: { storageClassName: "slow" } }),
      "spec.storageClassName",
    ],
    [
      "a RoleBinding's roleRef",
      object("rbac.authorization.k8s.io/v1", "RoleBinding", "r", "shop", { roleRef: { name: "view" } }),
      object("rbac.authorization.k8s.io/v1", "RoleBinding", "r", "shop", { roleRef: { name: "edit" } }),
      "roleRef",
    ],
  ])("flags a change to %s", (_name, base, head, path) => {
    const diff = diffEnvironment([base], [head]);
    expect(diff.dangers).toHaveLength(1);
    expect(diff.dangers[0]!.reason).toBe("immutable-field");
    expect(diff.dangers[0]!.detail).toContain(`: ${path} changes, but`);
  });

  it("lets a field the API server fills in go from unset to set, and mutable fields change", () => {
    const unset = object("v1", "Service", "web", "shop", { spec: { ports: [{ port: 80 }] } });
    const set = object("v1", "Service", "web", "shop", {
      spec: { ports: [{ port: 80 }], clusterIP: "10.0.0.1" },
    });
    expect(diffEnvironment([unset], [set]).dangers).toEqual([]);
    expect(diffEnvironment([deployment("x:1")], [deployment("x:1", { replicas: 5 })]).dangers).toEqual([]);
  });

  it("flags new data in a ConfigMap marked immutable", () => {
    const base = { ...configMap("frozen", { a: "1" }), immutable: true };
    const head = { ...configMap("frozen", { a: "2" }), immutable: true };
    expect(diffEnvironment([base], [head]).dangers.map((danger) => danger.detail)).toEqual([
      "ConfigMap shop/frozen: its data changes, but it is marked immutable: true (the apply would fail)",
    ]);
  });

  it("caps an object's diff and says so", () => {
    const many = (prefix: string) =>
      configMap("big", Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, `${prefix}${i}`])));
    const [change] = diffEnvironment([many("old")], [many("new")], { maxDiffLines: 20 }).changes;
    expect(change!.note).toBe("diff cut at 20 lines");
    expect(
      change!.unifiedDiff!.split("\n").filter((line) => /^[-+ ]/.test(line) && !/^(---|\+\+\+)/.test(line)),
    ).toHaveLength(20);
    expect(change!.unifiedDiff).toMatch(/… \d+ more diff lines not shown$/);
    const [large] = diffEnvironment([many("old")], [many("new")], { maxObjectLines: 50 }).changes;
    expect(large).toMatchObject({ kind: "changed", note: expect.stringContaining("too large to diff") });
    expect(large!.unifiedDiff).toBeUndefined();
  });

  it("prints apiVersion, kind and metadata first whatever order the API server sent them in", () => {
    const live = {
      data: { a: "1" },
      metadata: { name: "c", namespace: "shop" },
      apiVersion: "v1",
      kind: "ConfigMap",
    };
    const [change] = diffEnvironment([live as KubeObject], [configMap("c", { a: "2" })]).changes;
    expect(change!.unifiedDiff!.split("\n").slice(2)).toEqual([
      "@@ -4,4 +4,4 @@",
      "   name: c",
      "   namespace: shop",
      " data:",
      '-  a: "1"',
      '+  a: "2"',
    ]);
  });

  it("shares one diff budget across the environment: once spent, diffs are still correct, found linearly", () => {
    const shuffled = (name: string, order: number[]) =>
      configMap(name, Object.fromEntries(order.map((i) => [`k${i}`, `v${i}`])));
    const base = Array.from({ length: 50 }, (_, i) => shuffled(`c${i}`, [1, 2, 3, 4, 5, 6]));
    const head = Array.from({ length: 50 }, (_, i) => shuffled(`c${i}`, [6, 5, 4, 3, 2, 1]));
    // Same data in another order is no change at all.
    expect(diffEnvironment(base, head).unchanged).toBe(50);
    const moved = Array.from({ length: 50 }, (_, i) =>
      configMap(`c${i}`, { k1: "v1", k2: "x", k3: "v3", k4: "y", k5: "v5" }),
    );
    const start = Array.from({ length: 50 }, (_, i) =>
      configMap(`c${i}`, { k1: "v1", k2: "v2", k3: "v3", k4: "v4", k5: "v5" }),
    );
    const roomy = diffEnvironment(start, moved);
    const tight = diffEnvironment(start, moved, { maxDiffWork: 30 });
    const changedLines = (diff: string) => diff.split("\n").filter((line) => /^[-+] /.test(line)).length;
    // With room every diff is the shortest (two lines out, two in); once the budget is spent the middle is
    // shown removed then added (k3 too), which is longer but still turns one side into the other.
    expect(roomy.changes.every((change) => changedLines(change.unifiedDiff!) === 4)).toBe(true);
    expect(tight.changes.filter((change) => changedLines(change.unifiedDiff!) === 6).length).toBeGreaterThan(
      40,
    );
  });
});
