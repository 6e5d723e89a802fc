import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as k8s from "@kubernetes/client-node";
import { startClusterSimulator, type ClusterSimulator } from "../../../packages/sandbox/src/cluster/index.js";

/** Statuses thrown by client-node 2.x carry the HTTP code and the Status body (as JSON text). */
async function apiFailure(promise: Promise<unknown>): Promise<{ code: number; body: Record<string, any> }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: number; body?: unknown };
    return {
      code: e.code ?? 0,
      body: typeof e.body === "string" ? JSON.parse(e.body) : (e.body as Record<string, any>),
    };
  }
  throw new Error("expected the call to fail");
}

function deployment(
  name: string,
  image: string,
  replicas = 2,
  namespace = "default",
): k8s.KubernetesObject & Record<string, any> {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image }] } },
    },
  };
}

let sim: ClusterSimulator;
let kc: k8s.KubeConfig;
let objects: k8s.KubernetesObjectApi;
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;

async function start(options: Parameters<typeof startClusterSimulator>[0] = {}) {
  sim = await startClusterSimulator({ rolloutStepMs: 10, progressDeadlineMs: 200, ...options });
  kc = new k8s.KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  objects = k8s.KubernetesObjectApi.makeApiClient(kc);
  core = kc.makeApiClient(k8s.CoreV1Api);
  apps = kc.makeApiClient(k8s.AppsV1Api);
}

const ssa = (object: k8s.KubernetesObject, manager = "ferry", force = false, dryRun?: string) =>
  objects.patch(object, undefined, dryRun, manager, force, k8s.PatchStrategy.ServerSideApply);

describe("cluster simulator with @kubernetes/client-node", () => {
  beforeEach(async () => start());
  afterEach(async () => sim.close());

  it("lists the default namespaces and serves discovery for apps/v1", async () => {
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toEqual(
      expect.arrayContaining(["default", "kube-system"]),
    );
    const resources = await kc.makeApiClient(k8s.ApisApi).getAPIVersions();
    expect(resources.groups.map((g) => g.name)).toContain("apps");
  });

  it("creates, reads, replaces and deletes a ConfigMap", async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "settings" }, data: { color: "blue" } },
    });
    expect(created.metadata?.uid).toBeTruthy();
    const read = await core.readNamespacedConfigMap({ name: "settings", namespace: "default" });
    expect(read.data).toEqual({ color: "blue" });
    const replaced = await core.replaceNamespacedConfigMap({
      name: "settings",
      namespace: "default",
      body: { ...read, data: { color: "green" } },
    });
    expect(Number(replaced.metadata?.resourceVersion)).toBeGreaterThan(
      Number(read.metadata?.resourceVersion),
    );
    await core.deleteNamespacedConfigMap({ name: "settings", namespace: "default" });
    const gone = await apiFailure(core.readNamespacedConfigMap({ name: "settings", namespace: "default" }));
    expect(gone.code).toBe(404);
    expect(gone.body).toMatchObject({ kind: "Status", status: "Failure", reason: "NotFound" });
  });

  it("answers 409 Conflict to a replace carrying a stale resourceVersion", async () => {
    const created = await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "c" }, data: { a: "1" } },
    });
    await core.replaceNamespacedConfigMap({
      name: "c",
      namespace: "default",
      body: { ...created, data: { a: "2" } },
    });
    const failure = await apiFailure(
      core.replaceNamespacedConfigMap({
        name: "c",
        namespace: "default",
        body: { ...created, data: { a: "3" } },
      }),
    );
    expect(failure.code).toBe(409);
    expect(failure.body.reason).toBe("Conflict");
  });

  it("refuses an object in a namespace that does not exist with 404", async () => {
    const failure = await apiFailure(
      core.createNamespacedConfigMap({ namespace: "nowhere", body: { metadata: { name: "x" } } }),
    );
    expect(failure.code).toBe(404);
    expect(failure.body.message).toContain('namespaces "nowhere" not found');
  });

  it("creates with server-side apply and records the applier's fields", async () => {
    const applied = await ssa(deployment("web", "nginx:1.0"));
    const entry = applied.metadata?.managedFields?.find((f) => f.manager === "ferry");
    expect(entry?.operation).toBe("Apply");
    const fields = entry?.fieldsV1 as Record<string, any>;
    expect(fields["f:spec"]["f:replicas"]).toEqual({});
    expect(fields["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"app"}']["f:image"]).toEqual(
      {},
    );
  });

  it("bumps generation on spec changes only, and resourceVersion on every change", async () => {
    const first = await ssa(deployment("web", "nginx:1.0"));
    const relabelled = await ssa({
      ...deployment("web", "nginx:1.0"),
      metadata: { name: "web", namespace: "default", labels: { team: "a" } },
    });
    expect(relabelled.metadata?.generation).toBe(first.metadata?.generation);
    expect(Number(relabelled.metadata?.resourceVersion)).toBeGreaterThan(
      Number(first.metadata?.resourceVersion),
    );
    const bumped = await ssa(deployment("web", "nginx:2.0"));
    expect(bumped.metadata?.generation).toBe((first.metadata?.generation ?? 0) + 1);
  });

  it("leaves resourceVersion alone when an apply changes nothing", async () => {
    // A ConfigMap: no controller writes status between the two applies.
    const settings = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "s", namespace: "default" },
      data: { a: "1" },
    };
    const first = await ssa(settings);
    const again = await ssa(settings);
    expect(again.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
  });

  it("reports a FieldManagerConflict when another manager owns a field the apply changes", async () => {
    await ssa(deployment("web", "nginx:1.0", 2));
    sim.scale("Deployment", "default", "web", 5);
    const failure = await apiFailure(ssa(deployment("web", "nginx:1.0", 2)));
    expect(failure.code).toBe(409);
    expect(failure.body.reason).toBe("Conflict");
    expect(failure.body.details.causes).toEqual([
      expect.objectContaining({ type: "FieldManagerConflict", field: ".spec.replicas" }),
    ]);
    expect(failure.body.message).toBe(
      'Apply failed with 1 conflict: conflict with "kubectl-scale" with subresource "scale" using apps/v1: .spec.replicas',
    );
    expect(sim.get("apps/v1", "Deployment", "default", "web")?.spec).toMatchObject({ replicas: 5 });
  });

  it("takes ownership back and undoes the drift when applying with force", async () => {
    await ssa(deployment("web", "nginx:1.0", 2));
    sim.scale("Deployment", "default", "web", 5);
    const healed = await ssa(deployment("web", "nginx:1.0", 2), "ferry", true);
    expect((healed as any).spec.replicas).toBe(2);
    const managers = healed.metadata?.managedFields ?? [];
    const scaler = managers.find((m) => m.manager === "kubectl-scale");
    expect(scaler?.fieldsV1).toBeUndefined();
  });

  it("does not conflict when another manager applies the value already owned", async () => {
    await ssa(deployment("web", "nginx:1.0", 2));
    const shared = await ssa(deployment("web", "nginx:1.0", 2), "someone-else");
    expect(shared.metadata?.managedFields?.map((m) => m.manager).sort()).toEqual(["ferry", "someone-else"]);
  });

  it("removes fields the applier owned and now omits", async () => {
    const withLabel = deployment("web", "nginx:1.0");
    withLabel.metadata = { ...withLabel.metadata, labels: { tier: "front", team: "a" } };
    await ssa(withLabel);
    const withoutTeam = deployment("web", "nginx:1.0");
    withoutTeam.metadata = { ...withoutTeam.metadata, labels: { tier: "front" } };
    const after = await ssa(withoutTeam);
    expect(after.metadata?.labels).toEqual({ tier: "front" });
  });

  it("keeps a container another manager added when the applier omits it", async () => {
    await ssa(deployment("web", "nginx:1.0"));
    const sidecar = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "default" },
      spec: { template: { spec: { containers: [{ name: "sidecar", image: "envoy:1" }] } } },
    };
    await ssa(sidecar, "mesh-injector");
    const reapplied = await ssa(deployment("web", "nginx:1.1"));
    const names = (reapplied as any).spec.template.spec.containers.map((c: { name: string }) => c.name);
    expect(names).toEqual(["app", "sidecar"]);
  });

  it("returns the would-be object for a dry-run apply without storing it", async () => {
    const dry = await ssa(deployment("web", "nginx:1.0"), "ferry", false, "All");
    expect(dry.metadata?.name).toBe("web");
    expect(sim.get("apps/v1", "Deployment", "default", "web")).toBeUndefined();
    const dryRequest = sim.requests().find((r) => r.verb === "patch");
    expect(dryRequest).toMatchObject({ dryRun: true, fieldManager: "ferry", patchType: "apply" });
  });

  it("filters lists by label selector, field selector and pages with limit/continue", async () => {
    for (const [name, labels] of [
      ["a", { env: "prod", tier: "web" }],
      ["b", { env: "dev", tier: "web" }],
      ["c", { env: "prod" }],
    ] as const) {
      await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name, labels } } });
    }
    const names = async (labelSelector?: string, fieldSelector?: string) =>
      (await core.listNamespacedConfigMap({ namespace: "default", labelSelector, fieldSelector })).items.map(
        (i) => i.metadata?.name,
      );
    expect(await names("env=prod")).toEqual(["a", "c"]);
    expect(await names("env!=prod")).toEqual(["b"]);
    expect(await names("env in (dev,qa),tier")).toEqual(["b"]);
    expect(await names("!tier")).toEqual(["c"]);
    expect(await names(undefined, "metadata.name=b")).toEqual(["b"]);
    const firstPage = await core.listNamespacedConfigMap({ namespace: "default", limit: 2 });
    expect(firstPage.items).toHaveLength(2);
    const secondPage = await core.listNamespacedConfigMap({
      namespace: "default",
      limit: 2,
      _continue: firstPage.metadata?._continue,
    });
    expect(secondPage.items.map((i) => i.metadata?.name)).toEqual(["c"]);
  });

  it("streams ADDED, MODIFIED and DELETED events to a watch", async () => {
    const list = await core.listNamespacedConfigMap({ namespace: "default" });
    const events: string[] = [];
    const done = new Promise<void>((resolve) => {
      void new k8s.Watch(kc).watch(
        "/api/v1/namespaces/default/configmaps",
        { resourceVersion: list.metadata?.resourceVersion },
        (type, object) => {
          events.push(`${type} ${object.metadata.name}`);
          if (type === "DELETED") resolve();
        },
        () => {},
      );
    });
    await sim.waitFor("v1", "Namespace", undefined, "default", () => true);
    // Give the watch a moment to be registered before writing.
    while (!sim.requests().some((r) => r.verb === "watch")) await new Promise((r) => setTimeout(r, 5));
    await core.createNamespacedConfigMap({
      namespace: "default",
      body: { metadata: { name: "w" }, data: { a: "1" } },
    });
    await core.patchNamespacedConfigMap(
      { name: "w", namespace: "default", body: { data: { a: "2" } } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
    await core.deleteNamespacedConfigMap({ name: "w", namespace: "default" });
    await done;
    expect(events).toEqual(["ADDED w", "MODIFIED w", "DELETED w"]);
  });

  it("feeds a client-node informer its initial list and later changes", async () => {
    await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "before" } } });
    const informer = k8s.makeInformer(kc, "/api/v1/namespaces/default/configmaps", () =>
      core.listNamespacedConfigMap({ namespace: "default" }),
    );
    const seen: string[] = [];
    const added = new Promise<void>((resolve) =>
      informer.on("add", (object) => {
        seen.push(object.metadata?.name ?? "");
        if (object.metadata?.name === "after") resolve();
      }),
    );
    await informer.start();
    await core.createNamespacedConfigMap({ namespace: "default", body: { metadata: { name: "after" } } });
    await added;
    await informer.stop();
    expect(seen).toEqual(["before", "after"]);
    expect(
      informer
        .list("default")
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(["after", "before"]);
  });

  it("rolls a Deployment out: Progressing with ReplicaSetUpdated, then Available with NewReplicaSetAvailable", async () => {
    const observed = new Set<string>();
    const watching = sim
      .waitFor(
        "apps/v1",
        "Deployment",
        "default",
        "web",
        (d: any) => {
          for (const c of d.status?.conditions ?? []) observed.add(`${c.type}=${c.status}/${c.reason}`);
          return false;
        },
        1500,
      )
      .catch(() => undefined);
    await ssa(deployment("web", "nginx:1.0", 3));
    const done = await sim.waitFor("apps/v1", "Deployment", "default", "web", (d: any) =>
      d.status?.conditions?.some(
        (c: any) => c.type === "Progressing" && c.reason === "NewReplicaSetAvailable",
      ),
    );
    expect(done.status).toMatchObject({
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      observedGeneration: 1,
    });
    const read = await apps.readNamespacedDeployment({ name: "web", namespace: "default" });
    expect(read.status?.conditions?.find((c) => c.type === "Available")?.status).toBe("True");
    await watching;
    expect(observed).toContain("Progressing=True/ReplicaSetUpdated");
    expect(observed).toContain("Available=False/MinimumReplicasUnavailable");
    const replicaSets = await apps.listNamespacedReplicaSet({ namespace: "default" });
    expect(replicaSets.items).toHaveLength(1);
    expect(replicaSets.items[0]?.metadata?.ownerReferences?.[0]?.name).toBe("web");
  });

  it("replaces the old ReplicaSet when a new image rolls out", async () => {
    await ssa(deployment("web", "nginx:1.0", 2));
    await sim.waitFor(
      "apps/v1",
      "Deployment",
      "default",
      "web",
      (d: any) => d.status?.availableReplicas === 2,
    );
    await ssa(deployment("web", "nginx:1.1", 2));
    const done = await sim.waitFor(
      "apps/v1",
      "Deployment",
      "default",
      "web",
      (d: any) =>
        d.status?.observedGeneration === 2 &&
        d.status.conditions?.some(
          (c: any) => c.type === "Progressing" && c.reason === "NewReplicaSetAvailable",
        ),
    );
    expect(done.status).toMatchObject({ replicas: 2, updatedReplicas: 2, availableReplicas: 2 });
    const replicaSets = (await apps.listNamespacedReplicaSet({ namespace: "default" })).items;
    const byImage = Object.fromEntries(
      replicaSets.map((rs) => [rs.spec?.template?.spec?.containers[0]?.image, rs.spec?.replicas]),
    );
    expect(byImage).toEqual({ "nginx:1.0": 0, "nginx:1.1": 2 });
    const pods = sim.list("v1", "Pod", "default") as any[];
    expect(pods.map((p) => p.spec.containers[0].image)).toEqual(["nginx:1.1", "nginx:1.1"]);
  });

  it("fails a rollout whose image is missing with ProgressDeadlineExceeded and keeps the old pods serving", async () => {
    await sim.close();
    await start({ imageExists: async (image) => !image.endsWith(":missing") });
    await ssa(deployment("web", "nginx:1.0", 2));
    await sim.waitFor(
      "apps/v1",
      "Deployment",
      "default",
      "web",
      (d: any) => d.status?.readyReplicas === 2 && d.status?.updatedReplicas === 2,
    );
    await ssa(deployment("web", "nginx:missing", 2));
    const failed = await sim.waitFor("apps/v1", "Deployment", "default", "web", (d: any) =>
      d.status?.conditions?.some((c: any) => c.type === "Progressing" && c.status === "False"),
    );
    const progressing = (failed.status as any).conditions.find((c: any) => c.type === "Progressing");
    expect(progressing.reason).toBe("ProgressDeadlineExceeded");
    expect((failed.status as any).readyReplicas).toBe(2);
    const pods = sim.list("v1", "Pod", "default");
    const waiting = pods
      .flatMap((p: any) => p.status?.containerStatuses ?? [])
      .map((s: any) => s.state?.waiting?.reason);
    expect(waiting).toContain("ImagePullBackOff");
  });

  it("serves a custom resource once its CustomResourceDefinition exists", async () => {
    const widget = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w1", namespace: "default" },
      spec: { size: 3 },
    };
    await expect(ssa(widget)).rejects.toThrow();
    await ssa({
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "widgets.example.com" },
      spec: {
        group: "example.com",
        scope: "Namespaced",
        names: { plural: "widgets", singular: "widget", kind: "Widget", shortNames: ["wd"] },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            // client-node's typed models would drop "x-kubernetes-preserve-unknown-fields" on the way out,
            // so the schema declares what the widget sets (the server refuses undeclared fields).
            schema: {
              openAPIV3Schema: {
                type: "object",
                properties: { spec: { type: "object", properties: { size: { type: "integer" } } } },
              },
            },
          },
        ],
      },
    } as k8s.KubernetesObject);
    // As on kube-apiserver, the kind is served once the CRD is Established (kubectl wait --for=condition=established).
    await sim.waitFor(
      "apiextensions.k8s.io/v1",
      "CustomResourceDefinition",
      undefined,
      "widgets.example.com",
      (crd) =>
        ((crd.status as any)?.conditions ?? []).some(
          (c: any) => c.type === "Established" && c.status === "True",
        ),
    );
    const created = await ssa(widget);
    expect((created as any).spec.size).toBe(3);
    const listed = await objects.list("example.com/v1", "Widget", "default");
    expect(listed.items.map((i) => i.metadata?.name)).toEqual(["w1"]);
  });

  it("injects a failing LIST on demand and logs every request", async () => {
    sim.faults.failList({ resource: "deployments", status: 500, count: 1 });
    const failure = await apiFailure(apps.listNamespacedDeployment({ namespace: "default" }));
    expect(failure.code).toBe(500);
    expect(failure.body.reason).toBe("InternalError");
    const recovered = await apps.listNamespacedDeployment({ namespace: "default" });
    expect(recovered.items).toEqual([]);
    expect(
      sim
        .requests()
        .filter((r) => r.verb === "list")
        .map((r) => r.status),
    ).toEqual([500, 200]);
    sim.resetRequests();
    expect(sim.requests()).toEqual([]);
  });

  it("refuses requests carrying a bearer token other than the kubeconfig's", async () => {
    const response = await fetch(`${sim.url}/api/v1/namespaces`, {
      headers: { authorization: "Bearer wrong" },
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ kind: "Status", reason: "Unauthorized" });
  });
});
