import { deploymentReportOf } from "../../src/reconciler/deployment-report.js";
import { describe, expect, it } from "vitest";
import { TransientError } from "../../src/core/errors.js";
import type { ClusterPort } from "../../src/reconciler/ports.js";
import { createReconciler } from "../../src/reconciler/reconciler.js";
import {
  configMapYaml,
  deploymentYaml,
  type Setup,
  setupPerTest,
  storedInventory,
  writesOf,
} from "../support/reconciler-harness.js";

const { temp, setup } = setupPerTest();
let env: Setup | undefined;

describe("reconciling against the cluster simulator", () => {
  it("applies a fresh config with Ferry's labels and records the inventory", async () => {
    env = await setup();
    const sha = env.repo.commit({
      "env/staging/web.yaml": deploymentYaml("web"),
      "env/staging/config.yaml": configMapYaml("web-config"),
    });
    const result = await env.reconciler().cycle();
    expect(result.errors).toEqual([]);
    expect(result.appliedRevision).toBe(sha);
    expect(result.applied.map((ref) => `${ref.kind}/${ref.name}`).sort()).toEqual([
      "ConfigMap/web-config",
      "Deployment/web",
    ]);
    const web = env.sim.get("apps/v1", "Deployment", "shop", "web") as {
      metadata: { labels: Record<string, string> };
    };
    expect(web.metadata.labels).toMatchObject({
      "app.kubernetes.io/managed-by": "ferry",
      "ferry.dev/instance": "staging",
    });
    const inventory = storedInventory(env.sim.get("v1", "ConfigMap", "shop", "ferry-inventory-staging"));
    expect(inventory.appliedRevision).toBe(sha);
    expect(inventory.members).toEqual(["_ConfigMap_shop_web-config|v1", "apps_Deployment_shop_web|v1"]);
    const applies = writesOf(env.sim.requests());
    expect(applies.every((request) => request.fieldManager === "ferry")).toBe(true);
  });

  it("makes zero writes in a cycle where nothing changed", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/web.yaml": deploymentYaml("web"),
      "env/staging/config.yaml": configMapYaml("web-config"),
    });
    const reconciler = env.reconciler();
    await reconciler.cycle();
    env.sim.resetRequests();
    const second = await reconciler.cycle();
    expect(second.errors).toEqual([]);
    expect(second.applied).toEqual([]);
    expect(writesOf(env.sim.requests())).toEqual([]);
    expect(second.sync).toBe("Synced");
  });
});

type Deployment = { spec: { replicas: number }; metadata: { labels?: Record<string, string> } };

describe("self-heal", () => {
  it("undoes a human scaling a Deployment on the next cycle", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web", { replicas: 2 }) });
    const reconciler = env.reconciler();
    await reconciler.cycle();
    env.sim.scale("Deployment", "shop", "web", 5);
    expect((env.sim.get("apps/v1", "Deployment", "shop", "web") as Deployment).spec.replicas).toBe(5);
    const result = await reconciler.cycle();
    expect(result.plan?.apply.map((item) => [item.ref.name, item.changedPaths])).toEqual([
      ["web", ["spec.replicas"]],
    ]);
    expect((env.sim.get("apps/v1", "Deployment", "shop", "web") as Deployment).spec.replicas).toBe(2);
  });

  it("records what it undid: object, field, live and Git value, the field manager; on /status, as a metric and in the Deployment status", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web", { replicas: 2 }) });
    const reconciler = env.reconciler();
    const first = await reconciler.cycle();
    expect(first.drift).toBeUndefined();
    env.sim.scale("Deployment", "shop", "web", 5);
    const result = await reconciler.cycle();
    const record = {
      object: "Deployment.apps shop/web",
      field: "spec.replicas",
      live: "5",
      git: "2",
      manager: "kubectl-scale",
    };
    expect(result.drift?.undone).toEqual([expect.objectContaining(record)]);
    expect(reconciler.status().driftUndone).toEqual([expect.objectContaining(record)]);
    expect(reconciler.status().driftSummary).toBe("staging: 1 manual change undone in the last 24 h");
    expect(await reconciler.metrics.text()).toMatch(
      /^ferry_reconcile_drift_undone_total\{instance="staging"\} 1$/m,
    );
    expect(deploymentReportOf(result)?.description).toContain(
      "1 manual change undone in the last 24 h, last: Deployment.apps shop/web spec.replicas 5 → 2",
    );
    // A change that came from Git is not drift.
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web", { replicas: 3 }) });
    expect((await reconciler.cycle()).drift).toBeUndefined();
  });

  it("--no-self-heal reports OutOfSync with the drift and leaves it in place", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web", { replicas: 2 }) });
    const reconciler = env.reconciler({ selfHeal: false });
    await reconciler.cycle();
    env.sim.scale("Deployment", "shop", "web", 5);
    const result = await reconciler.cycle();
    expect(result.sync).toBe("OutOfSync");
    expect(result.drift?.left).toEqual([
      expect.objectContaining({ field: "spec.replicas", live: "5", git: "2" }),
    ]);
    expect(result.drift?.undone).toEqual([]);
    expect((env.sim.get("apps/v1", "Deployment", "shop", "web") as Deployment).spec.replicas).toBe(5);
    expect(reconciler.status().driftLeft).toHaveLength(1);
    expect(deploymentReportOf(result)?.description).toMatch(
      /^OutOfSync, self-heal off: Deployment\.apps shop\/web spec\.replicas is 5 in the cluster, 2 in Git/,
    );
  });

  it("self-heals from the timed loop without being asked", async () => {
    env = await setup({ rolloutStepMs: 10 });
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web", { replicas: 2 }) });
    const reconciler = env.reconciler({}, { intervalMs: 50, progressingIntervalMs: 50 });
    await reconciler.cycle();
    env.sim.scale("Deployment", "shop", "web", 7);
    reconciler.start();
    await env.sim.waitFor(
      "apps/v1",
      "Deployment",
      "shop",
      "web",
      (object) => (object as Deployment).spec.replicas === 2,
      20_000,
    );
  });
});

describe("pruning", () => {
  it("prunes an object removed from Git", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/web.yaml": deploymentYaml("web"),
      "env/staging/old.yaml": configMapYaml("old"),
    });
    const reconciler = env.reconciler();
    await reconciler.cycle();
    env.repo.commit({ "env/staging/old.yaml": null });
    const result = await reconciler.cycle();
    expect(result.pruned.map((ref) => ref.name)).toEqual(["old"]);
    expect(env.sim.get("v1", "ConfigMap", "shop", "old")).toBeUndefined();
    expect(env.sim.get("apps/v1", "Deployment", "shop", "web")).toBeDefined();
  });

  it("deletes nothing without --prune, and reports the orphan OutOfSync", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/web.yaml": deploymentYaml("web"),
      "env/staging/old.yaml": configMapYaml("old"),
    });
    const reconciler = env.reconciler({ prune: { prune: false } });
    await reconciler.cycle();
    env.repo.commit({ "env/staging/old.yaml": null });
    env.sim.resetRequests();
    const result = await reconciler.cycle();
    expect(writesOf(env.sim.requests()).filter((request) => request.verb === "delete")).toEqual([]);
    expect(env.sim.get("v1", "ConfigMap", "shop", "old")).toBeDefined();
    expect(result.sync).toBe("OutOfSync");
  });

  it("never prunes an object annotated ferry.dev/prune: disabled", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/web.yaml": deploymentYaml("web"),
      "env/staging/keep.yaml": configMapYaml("keep"),
    });
    const reconciler = env.reconciler();
    await reconciler.cycle();
    // Someone marks the live object as precious, then it leaves Git.
    env.sim.apply(
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "keep", namespace: "shop", annotations: { "ferry.dev/prune": "disabled" } },
      },
      { fieldManager: "kubectl" },
    );
    env.repo.commit({ "env/staging/keep.yaml": null });
    const result = await reconciler.cycle();
    expect(result.pruned).toEqual([]);
    expect(result.plan?.keep.map(({ ref, reason }) => [ref.name, reason])).toEqual([
      ["keep", "prune-disabled"],
    ]);
    expect(env.sim.get("v1", "ConfigMap", "shop", "keep")).toBeDefined();
  });

  it("never touches objects outside its inventory, even when they carry its labels", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web") });
    env.sim.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "stranger", namespace: "shop", labels: { "ferry.dev/instance": "staging" } },
    });
    const result = await env.reconciler().cycle();
    expect(result.pruned).toEqual([]);
    expect(env.sim.get("v1", "ConfigMap", "shop", "stranger")).toBeDefined();
  });

  it("trips the circuit breaker on a mass deletion and deletes nothing", async () => {
    env = await setup();
    const many: Record<string, string> = {};
    for (let index = 0; index < 12; index++)
      many[`env/staging/cm-${index}.yaml`] = configMapYaml(`cm-${index}`);
    env.repo.commit({ ...many, "env/staging/web.yaml": deploymentYaml("web") });
    const reconciler = env.reconciler();
    await reconciler.cycle();
    env.repo.commit(Object.fromEntries(Object.keys(many).map((file) => [file, null])));
    env.sim.resetRequests();
    const result = await reconciler.cycle();
    expect(result.pruned).toEqual([]);
    expect(result.errors.join("\n")).toMatch(/refusing to prune 12 objects/);
    expect(result.ok).toBe(false);
    expect(env.sim.requests().filter((request) => request.verb === "delete")).toEqual([]);
    expect(env.sim.list("v1", "ConfigMap", "shop").length).toBeGreaterThanOrEqual(12);
  });
});

describe("nothing is deleted when a cycle fails", () => {
  async function appliedThenBroken(breakIt: (current: Setup) => void | Promise<void>) {
    const current = (env = await setup());
    current.repo.commit({
      "env/staging/web.yaml": deploymentYaml("web"),
      "env/staging/old.yaml": configMapYaml("old"),
    });
    const reconciler = current.reconciler();
    const first = await reconciler.cycle();
    expect(first.errors).toEqual([]);
    await breakIt(current);
    current.sim.resetRequests();
    const result = await reconciler.cycle();
    expect(result.ok).toBe(false);
    expect(current.sim.requests().filter((request) => request.verb === "delete")).toEqual([]);
    expect(current.sim.get("v1", "ConfigMap", "shop", "old")).toBeDefined();
    expect(current.sim.get("apps/v1", "Deployment", "shop", "web")).toBeDefined();
    return { result, first, status: reconciler.status() };
  }

  it("on a render error", async () => {
    const { result } = await appliedThenBroken((current) => {
      current.repo.commit({
        "env/staging/old.yaml": null,
        "env/staging/web.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {}\n",
      });
    });
    expect(result.phase).toBe("render");
    expect(writesOf(env!.sim.requests())).toEqual([]);
  });

  it("when Git is unreachable, keeping the last applied revision", async () => {
    const { result, first, status } = await appliedThenBroken((current) => {
      current.repo.commit({ "env/staging/old.yaml": null });
      temp.cleanup(); // the repo folder vanishes
    });
    expect(result.phase).toBe("fetch");
    expect(status.lastApplied).toBe(first.appliedRevision);
    expect(status.health).toBe("Degraded");
  });

  it("when the API server fails a LIST", async () => {
    const { result } = await appliedThenBroken((current) => {
      current.repo.commit({ "env/staging/old.yaml": null });
      current.sim.faults.failList({ count: Infinity });
    });
    expect(result.phase).toBe("observe");
    expect(writesOf(env!.sim.requests())).toEqual([]);
  });

  it("when reading an object that left Git fails", async () => {
    const { result } = await appliedThenBroken((current) => {
      current.repo.commit({ "env/staging/old.yaml": null });
      current.sim.faults.fail({
        verb: "get",
        resource: "configmaps",
        name: "old",
        status: 503,
        count: Infinity,
      });
    });
    expect(result.phase).toBe("observe");
    expect(result.transient).toBe(true);
  });

  it("when the API server refuses the credentials", async () => {
    const { result } = await appliedThenBroken((current) => {
      current.repo.commit({ "env/staging/old.yaml": null });
      current.sim.faults.fail({ verb: "list", status: 401, count: Infinity });
    });
    expect(result.phase).toBe("observe");
    expect(result.errors.join("\n")).toMatch(/list/);
  });

  it("on an empty render with prune on", async () => {
    const { result } = await appliedThenBroken((current) => {
      current.repo.commit({
        "env/staging/old.yaml": null,
        "env/staging/web.yaml": null,
        "env/staging/README.md": "nothing here\n",
      });
    });
    expect(result.errors.join("\n")).toMatch(/empty/);
  });

  it("when the API server rejects the apply (the dry-run fails first, so nothing is written)", async () => {
    const { result, status } = await appliedThenBroken((current) => {
      current.repo.commit({
        "env/staging/old.yaml": null,
        "env/staging/web.yaml": deploymentYaml("web", { replicas: 3 }),
      });
      current.sim.faults.failApply({ resource: "deployments", count: Infinity });
    });
    expect(result.phase).toBe("observe");
    expect(result.appliedRevision).toBeUndefined();
    expect(writesOf(env!.sim.requests())).toEqual([]);
    expect(status.consecutiveFailures).toBe(1);
  });

  it("when a real apply fails after a clean dry-run, keeping what was applied in the inventory", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/web.yaml": deploymentYaml("web"),
      "env/staging/old.yaml": configMapYaml("old"),
    });
    const cluster = env.cluster;
    // Only the real write of the Deployment fails: the plan is made, then execution breaks half-way.
    const flaky: ClusterPort = {
      isNamespaced: (apiVersion, kind) => cluster.isNamespaced(apiVersion, kind),
      list: (...args) => cluster.list(...args),
      get: (ref) => cluster.get(ref),
      delete: (ref) => cluster.delete(ref),
      namespaceContents: (namespace) => cluster.namespaceContents(namespace),
      apply: async (object, options) => {
        if (!options.dryRun && object.kind === "Deployment")
          throw new TransientError("kubernetes-unavailable", "apply Deployment: HTTP 503");
        return cluster.apply(object, options);
      },
    };
    const reconciler = createReconciler({ cluster, source: env.fetcher, settings: env.settings() });
    await reconciler.cycle();
    env.repo.commit({
      "env/staging/old.yaml": null,
      "env/staging/web.yaml": deploymentYaml("web", { replicas: 3 }),
      "env/staging/new.yaml": configMapYaml("new"),
    });
    const broken = createReconciler({ cluster: flaky, source: env.fetcher, settings: env.settings() });
    env.sim.resetRequests();
    const result = await broken.cycle();
    expect(result.phase).toBe("apply");
    expect(result.transient).toBe(true);
    expect(result.appliedRevision).toBeUndefined();
    expect(broken.status().health).toBe("Degraded");
    expect(env.sim.requests().filter((request) => request.verb === "delete")).toEqual([]);
    expect(env.sim.get("v1", "ConfigMap", "shop", "old")).toBeDefined();
    const inventory = storedInventory(env.sim.get("v1", "ConfigMap", "shop", "ferry-inventory-staging"));
    expect(inventory.members).toContain("_ConfigMap_shop_new|v1");
    expect(inventory.members).toContain("_ConfigMap_shop_old|v1");
  });
});

describe("health", () => {
  it("goes from Progressing to Healthy as the rollout completes", async () => {
    env = await setup({ rolloutStepMs: 20 });
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web", { replicas: 3 }) });
    const reconciler = env.reconciler();
    const first = await reconciler.cycle();
    expect(first.health).toBe("Progressing");
    await env.sim.waitFor(
      "apps/v1",
      "Deployment",
      "shop",
      "web",
      (object) => (object.status as { availableReplicas?: number } | undefined)?.availableReplicas === 3,
    );
    const later = await reconciler.cycle();
    expect(later.health).toBe("Healthy");
    expect(later.sync).toBe("Synced");
  });

  it("reports Degraded when the image does not exist", async () => {
    env = await setup({
      rolloutStepMs: 20,
      progressDeadlineMs: 200,
      imageExists: async (image) => !image.endsWith(":missing"),
    });
    env.repo.commit({
      "env/staging/web.yaml": deploymentYaml("web", { image: "ghcr.io/acme/shop:missing" }),
    });
    const reconciler = env.reconciler();
    await reconciler.cycle();
    await env.sim.waitFor("apps/v1", "Deployment", "shop", "web", (object) =>
      ((object.status as { conditions?: { reason?: string }[] } | undefined)?.conditions ?? []).some(
        (condition) => condition.reason === "ProgressDeadlineExceeded",
      ),
    );
    const later = await reconciler.cycle();
    expect(later.health).toBe("Degraded");
    expect(later.objects.find((object) => object.ref.name === "web")?.message).toMatch(/progress deadline/);
  });
});

describe("--dry-run", () => {
  it("computes the plan and writes nothing", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web") });
    const result = await env.reconciler({ dryRun: true }).cycle();
    expect(result.plan?.apply.map((item) => [item.action, item.ref.name])).toEqual([["create", "web"]]);
    expect(writesOf(env.sim.requests())).toEqual([]);
    expect(env.sim.get("apps/v1", "Deployment", "shop", "web")).toBeUndefined();
  });
});

describe("watching applied objects", () => {
  it("self-heals from a watch event long before the next interval", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web", { replicas: 2 }) });
    const reconciler = env.reconciler(
      {},
      { intervalMs: 3_600_000, progressingIntervalMs: 3_600_000, watch: true, debounceMs: 50 },
    );
    reconciler.start();
    await env.sim.waitFor("apps/v1", "Deployment", "shop", "web", () => true);
    // Let the first cycle finish and its watches open before the human acts.
    await new Promise((resolve) => setTimeout(resolve, 300));
    env.sim.scale("Deployment", "shop", "web", 6);
    await env.sim.waitFor(
      "apps/v1",
      "Deployment",
      "shop",
      "web",
      (object) => (object as Deployment).spec.replicas === 2,
      20_000,
    );
  });
});

describe("ordering and namespaces", () => {
  it("creates a CRD before the custom resources that use it, in one cycle", async () => {
    env = await setup();
    const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;
    env.repo.commit({
      "env/staging/a-widget.yaml":
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: gear}\nspec: {size: 3}\n",
      "env/staging/z-crd.yaml": crd,
    });
    const reconciler = env.reconciler();
    const first = await reconciler.cycle();
    expect(first.errors).toEqual([]);
    expect(first.applied.map((ref) => ref.kind)).toEqual(["CustomResourceDefinition", "Widget"]);
    expect(env.sim.get("example.com/v1", "Widget", "shop", "gear")).toBeDefined();
    env.sim.resetRequests();
    const second = await reconciler.cycle();
    expect(second.applied).toEqual([]);
    expect(writesOf(env.sim.requests())).toEqual([]);
  });

  it("creates the target namespace with --create-namespace", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/config.yaml": configMapYaml("c") });
    const result = await env.reconciler({ namespace: "fresh", createNamespace: true }).cycle();
    expect(result.errors).toEqual([]);
    expect(result.applied.map((ref) => `${ref.kind}/${ref.namespace}/${ref.name}`)).toEqual([
      "Namespace//fresh",
      "ConfigMap/fresh/c",
    ]);
    expect(env.sim.get("v1", "ConfigMap", "fresh", "c")).toBeDefined();
  });

  it("reports an object the API server rejects as a user error, before writing anything", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/ok.yaml": configMapYaml("ok"),
      "env/staging/bad.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Not_A_Valid_Name}\n",
    });
    env.sim.resetRequests();
    const result = await env.reconciler().cycle();
    expect(result.ok).toBe(false);
    expect(result.transient).toBe(false);
    expect(writesOf(env.sim.requests())).toEqual([]);
  });
});

describe("a crash-looping apply", () => {
  it("backs off exponentially instead of hammering the API server", async () => {
    env = await setup();
    env.repo.commit({ "env/staging/web.yaml": deploymentYaml("web") });
    env.sim.faults.failApply({ count: Infinity, status: 500 });
    const delays: number[] = [];
    let enough: () => void = () => {};
    const fourFailures = new Promise<void>((resolve) => (enough = resolve));
    const log = (message: string, fields: Record<string, unknown>) => {
      if (message !== "reconcile backing off") return;
      delays.push(fields.retryInMs as number);
      if (delays.length === 4) enough();
    };
    const reconciler = env.reconciler(
      {},
      { intervalMs: 10, backoff: { baseMs: 40, maxMs: 160 }, random: () => 1, log },
    );
    reconciler.start();
    await fourFailures;
    await reconciler.stop();
    expect(delays.slice(0, 4)).toEqual([40, 80, 160, 160]);
    // One dry-run per failed cycle, never a write.
    expect(writesOf(env.sim.requests())).toEqual([]);
  });
});

describe("fidelity to Git", () => {
  it("applies fields the Kubernetes client's models do not know, byte for byte, and stays in sync", async () => {
    env = await setup();
    const manifest = deploymentYaml("web").replace(
      "          image:",
      "          futureKnob: enabled\n          image:",
    );
    env.repo.commit({ "env/staging/web.yaml": manifest });
    const reconciler = env.reconciler();
    await reconciler.cycle();
    const containers = (
      env.sim.get("apps/v1", "Deployment", "shop", "web") as {
        spec: { template: { spec: { containers: Record<string, unknown>[] } } };
      }
    ).spec.template.spec.containers;
    expect(containers[0]?.futureKnob).toBe("enabled");
    env.sim.resetRequests();
    expect((await reconciler.cycle()).applied).toEqual([]);
  });

  it("reads every page of a long list", async () => {
    // Pages of 20 (the product's default is 500): three pages, the last one short, without the
    // cost of applying 500+ objects on a busy machine.
    env = await setup({}, { listPageSize: 20 });
    const files: Record<string, string> = {};
    for (let index = 0; index < 45; index++)
      files[`env/staging/cm-${index}.yaml`] = configMapYaml(`cm-${index}`);
    env.repo.commit(files);
    const reconciler = env.reconciler();
    expect((await reconciler.cycle()).errors).toEqual([]);
    const listed = await env.cluster.list("v1", "ConfigMap", "shop", "ferry.dev/instance=staging");
    expect(listed).toHaveLength(45);
  });
});

describe("objects that already exist", () => {
  it("adopts an unlabelled object as an update, not a create", async () => {
    env = await setup();
    env.sim.create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "legacy", namespace: "shop" },
      data: { key: "old" },
    });
    env.repo.commit({ "env/staging/legacy.yaml": configMapYaml("legacy", { key: "new" }) });
    const result = await env.reconciler().cycle();
    expect(result.errors).toEqual([]);
    expect(result.plan?.apply.map((item) => [item.action, item.changedPaths])).toEqual([
      ["update", ["data.key", "metadata.labels"]],
    ]);
    expect(
      (env.sim.get("v1", "ConfigMap", "shop", "legacy") as { data: Record<string, string> }).data.key,
    ).toBe("new");
  });

  it("refuses to take over an object another Ferry instance manages, and writes nothing", async () => {
    env = await setup();
    env.repo.commit({
      "env/staging/shared.yaml": configMapYaml("shared"),
      "env/prod/shared.yaml": configMapYaml("shared"),
    });
    expect((await env.reconciler({ instance: "prod", path: "env/prod" }).cycle()).errors).toEqual([]);
    env.sim.resetRequests();
    const result = await env.reconciler().cycle();
    expect(result.ok).toBe(false);
    expect(result.errors.join("\n")).toMatch(/managed by Ferry instance "prod"/);
    expect(writesOf(env.sim.requests())).toEqual([]);
    const shared = env.sim.get("v1", "ConfigMap", "shop", "shared") as {
      metadata: { labels: Record<string, string> };
    };
    expect(shared.metadata.labels["ferry.dev/instance"]).toBe("prod");
  });
});
