import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startClusterSimulator, type ClusterSimulator } from "../../../packages/sandbox/src/cluster/index.js";

let sim: ClusterSimulator;

async function call(method: string, path: string, body?: unknown, contentType = "application/json") {
  const response = await fetch(`${sim.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${sim.token}`,
      ...(body !== undefined ? { "content-type": contentType } : {}),
    },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as any };
}

const deployment = (name: string, image = "nginx:1", replicas = 1) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "default" },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "app", image }] } },
  },
});

const DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments";

/** Reads a watch stream until `count` events arrived or the server ended it. */
async function watchEvents(path: string, count: number): Promise<{ type: string; object: any }[]> {
  const response = await fetch(`${sim.url}${path}`, { headers: { authorization: `Bearer ${sim.token}` } });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const events: { type: string; object: any }[] = [];
  while (events.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      events.push(JSON.parse(buffer.slice(0, newline)));
      buffer = buffer.slice(newline + 1);
    }
  }
  await reader.cancel();
  return events;
}

describe("cluster simulator over raw HTTP", () => {
  beforeEach(async () => {
    sim = await startClusterSimulator({ rolloutStepMs: 10, watchHistory: 50 });
  });
  afterEach(async () => sim.close());

  it("serves discovery with kinds, verbs, short names and subresources", async () => {
    const { body } = await call("GET", "/apis/apps/v1");
    const names = body.resources.map((r: any) => r.name);
    expect(names).toEqual(expect.arrayContaining(["deployments", "deployments/status", "deployments/scale"]));
    const deployments = body.resources.find((r: any) => r.name === "deployments");
    expect(deployments).toMatchObject({ kind: "Deployment", namespaced: true, shortNames: ["deploy"] });
    expect(deployments.verbs).toEqual(
      expect.arrayContaining(["get", "list", "watch", "create", "update", "patch", "delete"]),
    );
    expect((await call("GET", "/api")).body.versions).toEqual(["v1"]);
    expect((await call("GET", "/version")).body.major).toBe("1");
  });

  it("keeps status on spec writes and spec on status writes", async () => {
    await call("POST", DEPLOYMENTS, deployment("web"));
    await sim.waitFor("apps/v1", "Deployment", "default", "web", (d: any) => d.status?.readyReplicas === 1);
    const current = (await call("GET", `${DEPLOYMENTS}/web`)).body;
    const specWrite = await call("PUT", `${DEPLOYMENTS}/web`, { ...current, status: { replicas: 99 } });
    expect(specWrite.body.status.replicas).toBe(1);
    const statusWrite = await call(
      "PATCH",
      `${DEPLOYMENTS}/web/status`,
      { spec: { replicas: 7 }, status: { observedGeneration: 42 } },
      "application/merge-patch+json",
    );
    expect(statusWrite.status).toBe(200);
    expect(statusWrite.body.spec.replicas).toBe(1);
    expect(statusWrite.body.status.observedGeneration).toBe(42);
  });

  it("answers dry-run creates and deletes without storing or deleting anything", async () => {
    const created = await call("POST", `${DEPLOYMENTS}?dryRun=All`, deployment("dry"));
    expect(created.status).toBe(200);
    expect(created.body.metadata.name).toBe("dry");
    expect(sim.get("apps/v1", "Deployment", "default", "dry")).toBeUndefined();
    await call("POST", DEPLOYMENTS, deployment("real"));
    const deleted = await call("DELETE", `${DEPLOYMENTS}/real?dryRun=All`);
    expect(deleted.body.status).toBe("Success");
    expect(sim.get("apps/v1", "Deployment", "default", "real")).toBeDefined();
    expect(
      sim
        .requests()
        .filter((r) => r.dryRun)
        .map((r) => r.verb),
    ).toEqual(["create", "delete"]);
  });

  it("deletes dependents in the background and leaves them with propagationPolicy=Orphan", async () => {
    await call("POST", DEPLOYMENTS, deployment("cascade"));
    await call("POST", DEPLOYMENTS, deployment("orphaned"));
    await sim.waitFor(
      "apps/v1",
      "Deployment",
      "default",
      "orphaned",
      (d: any) => d.status?.readyReplicas === 1,
    );
    await sim.waitFor(
      "apps/v1",
      "Deployment",
      "default",
      "cascade",
      (d: any) => d.status?.readyReplicas === 1,
    );
    await call("DELETE", `${DEPLOYMENTS}/cascade`, { propagationPolicy: "Background" });
    await call("DELETE", `${DEPLOYMENTS}/orphaned?propagationPolicy=Orphan`);
    const replicaSets = sim.list("apps/v1", "ReplicaSet", "default").map((rs: any) => rs.metadata);
    expect(replicaSets.map((m) => String(m.name).split("-")[0])).toEqual(["orphaned"]);
    expect(replicaSets[0]!.ownerReferences).toBeUndefined();
  });

  it("refuses a strategic merge patch on a custom resource with 415", async () => {
    await call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "gadgets.example.com" },
      spec: {
        group: "example.com",
        scope: "Cluster",
        names: { plural: "gadgets", kind: "Gadget" },
        versions: [{ name: "v1", served: true, storage: true }],
      },
    });
    // As on kube-apiserver, the kind is served once the CRD is Established.
    await sim.waitFor(
      "apiextensions.k8s.io/v1",
      "CustomResourceDefinition",
      undefined,
      "gadgets.example.com",
      (crd) =>
        (
          (crd.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? []
        ).some((c) => c.type === "Established" && c.status === "True"),
    );
    expect((await call("GET", "/apis/example.com/v1")).body.resources[0]).toMatchObject({
      name: "gadgets",
      namespaced: false,
    });
    await call("POST", "/apis/example.com/v1/gadgets", {
      apiVersion: "example.com/v1",
      kind: "Gadget",
      metadata: { name: "g" },
      spec: { a: 1 },
    });
    const patched = await call(
      "PATCH",
      "/apis/example.com/v1/gadgets/g",
      { spec: { a: 2 } },
      "application/strategic-merge-patch+json",
    );
    expect(patched.status).toBe(415);
    expect(patched.body.reason).toBe("UnsupportedMediaType");
  });

  it("replays events after a resourceVersion and ends the watch after timeoutSeconds", async () => {
    const start = (await call("GET", "/api/v1/namespaces/default/configmaps")).body.metadata.resourceVersion;
    await call("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "one" } });
    await call("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name: "two" } });
    const events = await watchEvents(
      `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${start}&timeoutSeconds=1`,
      10,
    );
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(["ADDED one", "ADDED two"]);
  });

  it("reports objects entering and leaving a watch's label selector as ADDED and DELETED", async () => {
    const start = (await call("GET", "/api/v1/namespaces/default/configmaps")).body.metadata.resourceVersion;
    const eventsPromise = watchEvents(
      `/api/v1/namespaces/default/configmaps?watch=true&labelSelector=team%3Dx&resourceVersion=${start}`,
      3,
    );
    while (!sim.requests().some((r) => r.verb === "watch")) await new Promise((r) => setTimeout(r, 5));
    const labelled = (team: string) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "m", namespace: "default", labels: { team } },
    });
    sim.apply(labelled("y"));
    sim.apply(labelled("x"));
    sim.apply({ ...labelled("x"), data: { a: "1" } });
    sim.apply(labelled("y"));
    const events = await eventsPromise;
    expect(events.map((e) => e.type)).toEqual(["ADDED", "MODIFIED", "DELETED"]);
  });

  it("sends an ERROR event with 410 Expired for a resourceVersion older than the history", async () => {
    for (let i = 0; i < 60; i++)
      sim.apply({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "churn", namespace: "default" },
        data: { i: String(i) },
      });
    const [event] = await watchEvents(
      "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=2",
      1,
    );
    expect(event).toMatchObject({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired" } });
  });

  it("gives Services a clusterIP, binds claims and completes Jobs", async () => {
    await call("POST", "/api/v1/namespaces/default/services", {
      metadata: { name: "web" },
      spec: { ports: [{ port: 80 }] },
    });
    expect(sim.get("v1", "Service", "default", "web")?.spec).toMatchObject({
      type: "ClusterIP",
      clusterIP: expect.stringMatching(/^10\.96\./),
    });
    await call("POST", "/api/v1/namespaces/default/persistentvolumeclaims", {
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "5Gi" } } },
    });
    const claim = await sim.waitFor(
      "v1",
      "PersistentVolumeClaim",
      "default",
      "data",
      (c: any) => c.status?.phase === "Bound",
    );
    expect(claim.status).toMatchObject({ capacity: { storage: "5Gi" } });
    await call("POST", "/apis/batch/v1/namespaces/default/jobs", {
      metadata: { name: "migrate" },
      spec: {
        template: { spec: { restartPolicy: "Never", containers: [{ name: "m", image: "migrate:1" }] } },
      },
    });
    const job = await sim.waitFor(
      "batch/v1",
      "Job",
      "default",
      "migrate",
      (j: any) => j.status?.succeeded === 1,
    );
    expect((job.status as any).conditions.map((c: any) => c.type)).toContain("Complete");
  });

  it("gives StatefulSets and DaemonSets a ready status once their images exist", async () => {
    const template = {
      metadata: { labels: { app: "db" } },
      spec: { containers: [{ name: "db", image: "postgres:16" }] },
    };
    const spec = { selector: { matchLabels: { app: "db" } }, template };
    await call("POST", "/apis/apps/v1/namespaces/default/statefulsets", {
      metadata: { name: "db" },
      spec: { ...spec, replicas: 2, serviceName: "db" },
    });
    await call("POST", "/apis/apps/v1/namespaces/default/daemonsets", { metadata: { name: "agent" }, spec });
    const sts = await sim.waitFor(
      "apps/v1",
      "StatefulSet",
      "default",
      "db",
      (o: any) => o.status?.readyReplicas === 2,
    );
    expect(sts.status).toMatchObject({
      observedGeneration: 1,
      currentRevision: (sts.status as any).updateRevision,
    });
    const ds = await sim.waitFor(
      "apps/v1",
      "DaemonSet",
      "default",
      "agent",
      (o: any) => o.status?.numberReady === 1,
    );
    expect(ds.status).toMatchObject({ desiredNumberScheduled: 1, numberAvailable: 1 });
  });

  it("deletes a labelled collection and leaves the rest", async () => {
    for (const [name, team] of [
      ["a", "x"],
      ["b", "x"],
      ["c", "y"],
    ]) {
      await call("POST", "/api/v1/namespaces/default/configmaps", { metadata: { name, labels: { team } } });
    }
    const deleted = await call("DELETE", "/api/v1/namespaces/default/configmaps?labelSelector=team%3Dx");
    expect(deleted.body.items.map((i: any) => i.metadata.name)).toEqual(["a", "b"]);
    expect(sim.list("v1", "ConfigMap", "default").map((c: any) => c.metadata.name)).toEqual(["c"]);
  });

  it("rejects a Deployment whose selector does not match its template labels with 422", async () => {
    const bad = deployment("bad");
    bad.spec.template.metadata.labels = { app: "other" };
    const result = await call("POST", DEPLOYMENTS, bad);
    expect(result.status).toBe(422);
    expect(result.body).toMatchObject({
      reason: "Invalid",
      details: { causes: [expect.objectContaining({ field: "spec.template.metadata.labels" })] },
    });
  });

  it("fails the given number of server-side applies on demand, then serves them again", async () => {
    sim.faults.failApply({ resource: "deployments", status: 503, count: 2 });
    const apply = () =>
      call(
        "PATCH",
        `${DEPLOYMENTS}/web?fieldManager=ferry`,
        deployment("web"),
        "application/apply-patch+yaml",
      );
    const first = await apply();
    expect(first.status).toBe(503);
    expect(first.body).toMatchObject({ kind: "Status", reason: "ServiceUnavailable", code: 503 });
    expect((await apply()).status).toBe(503);
    expect((await apply()).status).toBe(201);
    expect((await apply()).status).toBe(200);
    expect(sim.requests().map((r) => r.patchType)).toEqual(["apply", "apply", "apply", "apply"]);
  });

  it("requires a fieldManager for server-side apply", async () => {
    const result = await call(
      "PATCH",
      `${DEPLOYMENTS}/web`,
      deployment("web"),
      "application/apply-patch+yaml",
    );
    expect(result.status).toBe(400);
    expect(result.body.message).toContain("fieldManager");
  });
});
