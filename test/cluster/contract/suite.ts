/**
 * The reconciler's cluster behaviour, written once and run against kube-apiserver + etcd
 * (`test/cluster/contract.test.ts`, `npm run test:cluster`) and against the cluster simulator
 * (`test/sandbox/cluster/contract.test.ts`, `npm test`). A case that only one backend can express
 * says so in its name and is skipped on the other, never silently.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Reconciler } from "../../../src/reconciler/reconciler.js";
import type { CycleResult } from "../../../src/reconciler/reconcile-cycle.js";
import type { ObjectRef } from "../../../src/reconciler/types.js";
import { configMapYaml, deploymentYaml } from "../../support/reconciler-harness.js";
import { eventually, readObject, type ClusterBackend } from "./backend.js";
import {
  clusterRoleYaml,
  crdYaml,
  deploymentWithSecretYaml,
  namespaceYaml,
  serviceYaml,
  widgetYaml,
} from "./manifests.js";
import { createWorld, fingerprints, type World } from "./world.js";
import { startTcpProxy } from "./tcp-proxy.js";

type Deployment = {
  metadata: { annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
};

function refsOf(result: CycleResult): ObjectRef[] {
  return result.objects.map((object) => object.ref);
}

export interface BackendTraits {
  /** Whether the backend authorizes requests (RBAC); the RBAC cases are skipped where it does not. */
  authorization: boolean;
}

export function describeClusterContract(
  name: string,
  startBackend: () => Promise<ClusterBackend>,
  traits: BackendTraits,
): void {
  describe(`the reconciler against ${name}`, () => {
    let backend: ClusterBackend;
    let world: World | undefined;
    const open = async () => (world = await createWorld(backend));

    beforeAll(async () => {
      backend = await startBackend();
    });
    afterAll(async () => {
      await backend?.close();
    });
    afterEach(async () => {
      await world?.close();
      world = undefined;
    });

    describe("a kustomize render with every kind of object", () => {
      let shared: World;
      let appNs: string;
      let group: string;
      let first: CycleResult;
      let reconciler: Reconciler;

      beforeAll(async () => {
        shared = await createWorld(backend);
        appNs = `${shared.ns}-app`;
        group = `${shared.id}.ferry.test`;
        shared.repo.commit({
          "env/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [namespace.yaml, crd.yaml, widget.yaml, config.yaml, service.yaml, web.yaml, role.yaml]
secretGenerator:
  - name: web-secret
    literals: [password=not-a-real-password]
`,
          "env/namespace.yaml": namespaceYaml(appNs),
          "env/crd.yaml": crdYaml(group),
          "env/widget.yaml": widgetYaml(group, "gear", "red"),
          "env/config.yaml": configMapYaml("web-config"),
          "env/service.yaml": serviceYaml("web"),
          "env/web.yaml": deploymentWithSecretYaml("web", "web-secret"),
          "env/role.yaml": clusterRoleYaml(`ferry-test-${shared.id}`),
        });
        reconciler = shared.reconciler({ namespace: appNs });
        first = await reconciler.cycle();
      });
      afterAll(async () => {
        await shared?.close();
      });

      it("applies the Namespace, CRD, custom resource, cluster-scoped object, Secret, Service and Deployment in one cycle", async () => {
        expect(first.errors).toEqual([]);
        expect(first.ok || first.health === "Progressing").toBe(true);
        expect(first.applied.map((ref) => ref.kind).sort()).toEqual(
          [
            "ClusterRole",
            "ConfigMap",
            "CustomResourceDefinition",
            "Deployment",
            "Namespace",
            "Secret",
            "Service",
            "Widget",
          ].sort(),
        );
        const widget = await readObject(shared.admin, `${group}/v1`, "Widget", appNs, "gear");
        expect(widget?.metadata.labels?.["ferry.dev/instance"]).toBe(shared.instance);
        // The structural schema's default is filled in by the API server, not by Git.
        expect((widget?.spec as { size?: number }).size).toBe(1);
        const web = (await readObject(shared.admin, "apps/v1", "Deployment", appNs, "web")) as unknown as {
          spec: {
            template: {
              spec: { containers: { env: { valueFrom: { secretKeyRef: { name: string } } }[] }[] };
            };
          };
        };
        const secretName = web.spec.template.spec.containers[0]!.env[0]!.valueFrom.secretKeyRef.name;
        expect(secretName).toMatch(/^web-secret-[a-z0-9]+$/);
        expect(await readObject(shared.admin, "v1", "Secret", appNs, secretName)).toBeDefined();
        expect(
          await readObject(
            shared.admin,
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            "",
            `ferry-test-${shared.id}`,
          ),
        ).toBeDefined();
      });

      it("makes zero writes on the next cycle: generations (resourceVersions where there is none) and managedFields stay as they were", async () => {
        const before = await fingerprints(shared.admin, refsOf(first));
        shared.counting.reset();
        const second = await reconciler.cycle();
        expect(second.errors).toEqual([]);
        expect(second.applied).toEqual([]);
        expect(shared.counting.writes).toEqual([]);
        expect(await fingerprints(shared.admin, refsOf(first))).toEqual(before);
      });

      it("shows no phantom drift for server-defaulted fields in a dry-run by a reconciler that has seen nothing", async () => {
        const fresh = shared.reconciler({ namespace: appNs, dryRun: true });
        const result = await fresh.cycle();
        expect(result.errors).toEqual([]);
        expect(result.plan?.apply.map((item) => [item.ref.kind, item.changedPaths])).toEqual([]);
        expect(shared.counting.dryRuns).toBeGreaterThan(0); // it diffed every object for real
      });

      it("makes zero writes from a freshly started reconciler too (no diff memory)", async () => {
        const before = await fingerprints(shared.admin, refsOf(first));
        const fresh = shared.reconciler({ namespace: appNs });
        const result = await fresh.cycle();
        expect(result.errors).toEqual([]);
        expect(shared.counting.writes).toEqual([]);
        expect(await fingerprints(shared.admin, refsOf(first))).toEqual(before);
      });
    });

    describe("drift", () => {
      it("undoes kubectl scale, kubectl edit and a client-side kubectl apply on the next cycle", async () => {
        const w = await open();
        w.repo.commit({
          "env/web.yaml": deploymentYaml("web", { replicas: 2 }),
          "env/settings.yaml": configMapYaml("settings", { mode: "git" }),
        });
        const reconciler = w.reconciler();
        expect((await reconciler.cycle()).errors).toEqual([]);

        await w.kubectl.ok(["scale", "deployment", "web", "-n", w.ns, "--replicas=5"]);
        await w.kubectl.ok(["edit", "configmap", "settings", "-n", w.ns], {
          env: { KUBE_EDITOR: "sed -i s/mode:\\ git/mode:\\ edited/" },
        });
        await w.kubectl.ok(["apply", "-n", w.ns, "-f", "-"], {
          stdin: deploymentYaml("web", { replicas: 5, image: "ghcr.io/acme/shop:6.6.6" }),
        });
        const drifted = (await readObject(
          w.admin,
          "apps/v1",
          "Deployment",
          w.ns,
          "web",
        )) as unknown as Deployment;
        expect(drifted.spec.template.spec.containers[0]!.image).toBe("ghcr.io/acme/shop:6.6.6");
        const settings = await readObject(w.admin, "v1", "ConfigMap", w.ns, "settings");
        expect((settings?.data as Record<string, string>).mode).toBe("edited");

        const healed = await reconciler.cycle();
        expect(healed.errors).toEqual([]);
        expect(healed.applied.map((ref) => ref.name).sort()).toEqual(["settings", "web"]);
        const web = (await readObject(
          w.admin,
          "apps/v1",
          "Deployment",
          w.ns,
          "web",
        )) as unknown as Deployment;
        expect(web.spec.replicas).toBe(2);
        expect(web.spec.template.spec.containers[0]!.image).toBe("ghcr.io/acme/shop:1.8.0");
        const after = await readObject(w.admin, "v1", "ConfigMap", w.ns, "settings");
        expect((after?.data as Record<string, string>).mode).toBe("git");
        w.counting.reset();
        expect((await reconciler.cycle()).applied).toEqual([]);
        expect(w.counting.writes).toEqual([]);
      });

      it("leaves alone a field another manager owns and Git does not set", async () => {
        const w = await open();
        w.repo.commit({
          "env/web.yaml": deploymentYaml("web"),
          "env/settings.yaml": configMapYaml("settings", { mode: "git" }),
        });
        const reconciler = w.reconciler();
        expect((await reconciler.cycle()).errors).toEqual([]);
        await w.kubectl.ok(["annotate", "deployment", "web", "-n", w.ns, "team=payments"]);
        await w.kubectl.ok([
          "patch",
          "configmap",
          "settings",
          "-n",
          w.ns,
          "--type=merge",
          "-p",
          '{"data":{"extra":"kept"}}',
        ]);
        w.counting.reset();
        const result = await reconciler.cycle();
        expect(result.errors).toEqual([]);
        expect(result.applied).toEqual([]);
        expect(w.counting.writes).toEqual([]);
        const web = (await readObject(
          w.admin,
          "apps/v1",
          "Deployment",
          w.ns,
          "web",
        )) as unknown as Deployment;
        expect(web.metadata.annotations?.team).toBe("payments");
        const settings = await readObject(w.admin, "v1", "ConfigMap", w.ns, "settings");
        expect(settings?.data).toEqual({ mode: "git", extra: "kept" });
      });
    });

    describe("refused changes", () => {
      it.each([
        {
          what: "a Deployment's selector",
          before: () => deploymentYaml("web"),
          after: () => deploymentYaml("web").replaceAll("app: web}", "app: web2}"),
          object: "Deployment",
        },
        {
          what: "a Service's clusterIP",
          // From the range's static band (its first 16 addresses), which kube-apiserver hands out
          // to Services without a clusterIP only once the rest is full: the other tests' Services
          // on the shared API server once took 10.0.0.100 first.
          before: () => serviceYaml("web", { clusterIP: "10.0.0.11" }),
          after: () => serviceYaml("web", { clusterIP: "10.0.0.12" }),
          object: "Service",
        },
      ])(
        "changing $what (immutable) fails that object clearly and deletes nothing",
        async ({ before, after, object }) => {
          const w = await open();
          w.repo.commit({ "env/web.yaml": before(), "env/old.yaml": configMapYaml("old") });
          const reconciler = w.reconciler();
          expect((await reconciler.cycle()).errors).toEqual([]);
          w.repo.commit({ "env/web.yaml": after(), "env/old.yaml": null });
          w.counting.reset();
          const result = await reconciler.cycle();
          expect(result.ok).toBe(false);
          expect(result.transient).toBe(false);
          expect(result.errors.join("\n")).toMatch(
            new RegExp(`${object} ${w.ns}/web: .*immutable|may not change`),
          );
          expect(w.counting.deletes).toEqual([]);
          expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "old")).toBeDefined();
        },
      );

      it("a field the CRD's schema does not declare fails that custom resource as a config error (not a retryable one), deleting nothing", async () => {
        const w = await open();
        const group = `${w.id}.ferry.test`;
        w.repo.commit({
          "env/crd.yaml": crdYaml(group),
          "env/gear.yaml": widgetYaml(group, "gear", "red"),
          "env/old.yaml": configMapYaml("old"),
        });
        const reconciler = w.reconciler();
        expect((await reconciler.cycle()).errors).toEqual([]);
        w.repo.commit({
          "env/gear.yaml": widgetYaml(group, "gear", "red").replace(
            "  colour: red",
            "  colour: red\n  colur: blue",
          ),
          "env/old.yaml": null,
        });
        w.counting.reset();
        const result = await reconciler.cycle();
        expect(result.ok).toBe(false);
        expect(result.transient).toBe(false);
        expect(result.errors.join("\n")).toMatch(
          new RegExp(`Widget ${w.ns}/gear: .*\\.spec\\.colur: field not declared in schema`),
        );
        expect(w.counting.writes).toEqual([]);
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "old")).toBeDefined();
      });

      it("a 422 from admission fails that object clearly, writes nothing and deletes nothing", async () => {
        const w = await open();
        w.repo.commit({ "env/web.yaml": deploymentYaml("web"), "env/old.yaml": configMapYaml("old") });
        const reconciler = w.reconciler();
        expect((await reconciler.cycle()).errors).toEqual([]);
        const undo = await backend.rejectWrites({
          group: "",
          version: "v1",
          resource: "configmaps",
          namespace: w.ns,
          name: "blocked",
          message: "ferry-test: configmap blocked by policy",
        });
        try {
          w.repo.commit({ "env/blocked.yaml": configMapYaml("blocked"), "env/old.yaml": null });
          w.counting.reset();
          const result = await reconciler.cycle();
          expect(result.ok).toBe(false);
          expect(result.transient).toBe(false);
          expect(result.errors.join("\n")).toMatch(
            new RegExp(`ConfigMap ${w.ns}/blocked: .*ferry-test: configmap blocked by policy`),
          );
          expect(w.counting.writes).toEqual([]);
          expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "old")).toBeDefined();
        } finally {
          await undo();
        }
      });
    });

    describe("pruning", () => {
      it("prunes an object that left Git and never one outside the inventory, even with Ferry's label", async () => {
        const w = await open();
        w.repo.commit({ "env/web.yaml": deploymentYaml("web"), "env/old.yaml": configMapYaml("old") });
        const reconciler = w.reconciler();
        expect((await reconciler.cycle()).errors).toEqual([]);
        await w.kubectl.ok(["apply", "-n", w.ns, "-f", "-"], {
          stdin: configMapYaml("stranger", { a: "b" }, `  labels: {ferry.dev/instance: ${w.instance}}\n`),
        });
        w.repo.commit({ "env/old.yaml": null });
        const result = await reconciler.cycle();
        expect(result.errors).toEqual([]);
        expect(result.pruned.map((ref) => `${ref.kind}/${ref.name}`)).toEqual(["ConfigMap/old"]);
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "old")).toBeUndefined();
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "stranger")).toBeDefined();
      });

      it.each<{ what: string; change: Record<string, string | null> }>([
        {
          what: "an empty render",
          change: { "env/web.yaml": null, "env/old.yaml": null, "env/README.md": "empty\n" },
        },
        {
          what: "a render error",
          change: {
            "env/old.yaml": null,
            "env/web.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {}\n",
          },
        },
      ])("deletes nothing on $what", async ({ change }) => {
        const w = await open();
        w.repo.commit({ "env/web.yaml": deploymentYaml("web"), "env/old.yaml": configMapYaml("old") });
        const reconciler = w.reconciler();
        expect((await reconciler.cycle()).errors).toEqual([]);
        w.repo.commit(change);
        w.counting.reset();
        const result = await reconciler.cycle();
        expect(result.ok).toBe(false);
        expect(w.counting.writes).toEqual([]);
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "old")).toBeDefined();
        expect(await readObject(w.admin, "apps/v1", "Deployment", w.ns, "web")).toBeDefined();
      });

      it("deletes nothing when the API server refuses the credentials", async () => {
        const w = await open();
        w.repo.commit({ "env/web.yaml": deploymentYaml("web"), "env/old.yaml": configMapYaml("old") });
        expect((await w.reconciler().cycle()).errors).toEqual([]);
        w.repo.commit({ "env/old.yaml": null });
        const badToken = backend.kubeconfig().replace(/token: .*/, "token: not-a-valid-token");
        const result = await w.reconciler({}, { kubeconfig: badToken }).cycle();
        expect(result.ok).toBe(false);
        expect(result.phase).toBe("observe");
        expect(result.errors.join("\n")).toMatch(/Unauthorized|HTTP 401/);
        expect(w.counting.writes).toEqual([]);
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "old")).toBeDefined();
      });

      it("trips the circuit breaker on a mass deletion and deletes nothing", async () => {
        const w = await open();
        const many: Record<string, string> = {};
        for (let index = 0; index < 12; index++) many[`env/cm-${index}.yaml`] = configMapYaml(`cm-${index}`);
        w.repo.commit({ ...many, "env/web.yaml": deploymentYaml("web") });
        const reconciler = w.reconciler();
        expect((await reconciler.cycle()).errors).toEqual([]);
        w.repo.commit(Object.fromEntries(Object.keys(many).map((file) => [file, null])));
        w.counting.reset();
        const result = await reconciler.cycle();
        expect(result.ok).toBe(false);
        expect(result.errors.join("\n")).toMatch(/refusing to prune 12 objects/);
        expect(w.counting.deletes).toEqual([]);
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "cm-0")).toBeDefined();
      });
    });

    describe("watching", () => {
      it("self-heals from a watch event long before the next interval, and again after the connections are cut", async () => {
        const w = await open();
        const proxy = await startTcpProxy(new URL(backend.kubeconfig().match(/server: (\S+)/)![1]!));
        try {
          w.repo.commit({ "env/web.yaml": deploymentYaml("web", { replicas: 2 }) });
          const kubeconfig = backend.kubeconfig().replace(/server: \S+/, `server: ${proxy.url}`);
          const reconciler = w.reconciler(
            {},
            {
              kubeconfig,
              intervalMs: 3_600_000,
              progressingIntervalMs: 3_600_000,
              watch: true,
              debounceMs: 50,
            },
          );
          reconciler.start();
          const replicas = async () =>
            (
              (await readObject(w.admin, "apps/v1", "Deployment", w.ns, "web")) as unknown as
                Deployment | undefined
            )?.spec.replicas;
          await eventually(replicas, (value) => value === 2, 60_000, "the first cycle");
          // The watch is open once the proxy carries a long-lived stream.
          await eventually(
            async () => proxy.open(),
            (open) => open > 0,
            30_000,
            "a watch connection",
          );
          await w.kubectl.ok(["scale", "deployment", "web", "-n", w.ns, "--replicas=6"]);
          await eventually(replicas, (value) => value === 2, 60_000, "the watch-driven heal");

          proxy.cutAll();
          await eventually(
            async () => proxy.accepted(),
            (count) => count > 0,
            30_000,
            "a reconnection",
          );
          await eventually(
            async () => proxy.open(),
            (open) => open > 0,
            30_000,
            "a watch connection again",
          );
          await w.kubectl.ok(["scale", "deployment", "web", "-n", w.ns, "--replicas=7"]);
          await eventually(replicas, (value) => value === 2, 60_000, "the heal after reconnecting");
        } finally {
          await proxy.close();
        }
      });
    });

    describe("RBAC with the shipped Role (deploy/reconciler/base)", () => {
      it.skipIf(!traits.authorization)(
        "does its whole job in its namespace with the ServiceAccount's token",
        async () => {
          const w = await open();
          const kubeconfig = await installReconcilerRbac(w, backend);
          w.repo.commit({
            "env/web.yaml": deploymentYaml("web"),
            "env/config.yaml": configMapYaml("web-config"),
            "env/service.yaml": serviceYaml("web"),
            "env/old.yaml": configMapYaml("old"),
          });
          const reconciler = w.reconciler({}, { kubeconfig });
          const first = await reconciler.cycle();
          expect(first.errors).toEqual([]);
          expect(first.applied).toHaveLength(4);
          w.counting.reset();
          expect((await reconciler.cycle()).applied).toEqual([]);
          expect(w.counting.writes).toEqual([]);
          await w.kubectl.ok(["scale", "deployment", "web", "-n", w.ns, "--replicas=4"]);
          w.repo.commit({ "env/old.yaml": null });
          const third = await reconciler.cycle();
          expect(third.errors).toEqual([]);
          expect(third.pruned.map((ref) => ref.name)).toEqual(["old"]);
          expect(third.applied.map((ref) => ref.name)).toEqual(["web"]);
        },
      );

      it.skipIf(!traits.authorization).each([
        {
          what: "an object in another namespace",
          file: (w: World) => configMapYaml("elsewhere", { a: "b" }, `  namespace: ${w.ns}-other\n`),
          forbidden: /configmaps.* is forbidden/,
        },
        {
          what: "a cluster-scoped object",
          file: (w: World) => clusterRoleYaml(`ferry-test-${w.id}`),
          forbidden: /clusterroles.* is forbidden/,
        },
      ])(
        "is refused $what with a clear 403 error, deletes nothing and backs off",
        async ({ file, forbidden }) => {
          const w = await open();
          await w.createNamespace(`${w.ns}-other`);
          const kubeconfig = await installReconcilerRbac(w, backend);
          w.repo.commit({ "env/web.yaml": deploymentYaml("web"), "env/old.yaml": configMapYaml("old") });
          const reconciler = w.reconciler(
            {},
            { kubeconfig, intervalMs: 3_600_000, backoff: { baseMs: 60_000, maxMs: 60_000 } },
          );
          expect((await reconciler.cycle()).errors).toEqual([]);
          w.repo.commit({ "env/old.yaml": null, "env/outside.yaml": file(w) });
          w.counting.reset();
          const result = await reconciler.cycle();
          expect(result.ok).toBe(false);
          expect(result.transient).toBe(false);
          expect(result.errors.join("\n")).toMatch(forbidden);
          expect(w.counting.deletes).toEqual([]);
          expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "old")).toBeDefined();
          const status = reconciler.status();
          expect(status.consecutiveFailures).toBe(1);
          expect(status.errors.join("\n")).toMatch(forbidden);
        },
      );
    });
  });
}

/** Applies the shipped reconciler base into the world's namespace and returns its ServiceAccount's kubeconfig. */
async function installReconcilerRbac(w: World, backend: ClusterBackend): Promise<string> {
  const rendered = await w.kubectl.ok(["kustomize", "deploy/reconciler/base"]);
  await w.kubectl.ok(["apply", "-n", w.ns, "-f", "-"], { stdin: rendered });
  return backend.serviceAccountKubeconfig!(w.ns, "ferry-reconciler");
}
