/**
 * The inventory's cluster behaviour (docs/architecture.md "The inventory"), written once and run
 * against kube-apiserver + etcd (`test/cluster/inventory.test.ts`) and the cluster simulator
 * (`test/sandbox/cluster/inventory-contract.test.ts`): one writer per path (the Lease), a stale
 * reader that never prunes what a newer revision added, intent recorded before applying, and a
 * restarted no-op cycle that trusts its stored dry-run memory only where it cannot be stale.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigRepoFetcher } from "../../../src/adapters/git/config-repo-fetcher.js";
import { inventoryName } from "../../../src/reconciler/inventory.js";
import type { ClusterPort } from "../../../src/reconciler/ports.js";
import type { KubeObject } from "../../../src/reconciler/types.js";
import { configMapYaml, deploymentYaml, GIT_ENV, storedInventory } from "../../support/reconciler-harness.js";
import { readObject, type ClusterBackend } from "./backend.js";
import { startCountingProxy } from "./counting-proxy.js";
import { CountingCluster, createWorld, type World } from "./world.js";

const lease = (holder: string, durationMs = 3_600_000) => ({ lease: { holder, durationMs } });

/** Passes calls through until `dieAfterApplies` real applies of non-inventory objects succeeded; then every call fails, as a process that died would. */
class DyingCluster extends CountingCluster {
  private applies = 0;
  constructor(
    inner: ClusterPort,
    private readonly dieAfterApplies: number,
  ) {
    super(inner);
  }
  private dead(): boolean {
    return this.applies >= this.dieAfterApplies;
  }
  override apply(object: KubeObject, options: { dryRun: boolean }) {
    if (this.dead()) return Promise.reject(new Error("the process died"));
    const isInventory = object.metadata.name.startsWith("ferry-inventory-");
    return super.apply(object, options).then((result) => {
      if (!options.dryRun && !isInventory) this.applies++;
      return result;
    });
  }
  override delete(...args: Parameters<CountingCluster["delete"]>) {
    if (this.dead()) return Promise.reject(new Error("the process died"));
    return super.delete(...args);
  }
}

export function describeInventoryContract(name: string, startBackend: () => Promise<ClusterBackend>): void {
  describe(`the inventory against ${name}`, () => {
    let backend: ClusterBackend;
    let world: World | undefined;
    const open = async () => (world = await createWorld(backend));
    const inventoryOf = async (w: World) =>
      storedInventory(await readObject(w.admin, "v1", "ConfigMap", w.ns, inventoryName(w.instance)));

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

    describe("one writer per path", () => {
      it("a second reconciler does not apply while another holds the path's Lease, says who does, and takes over once it has expired", async () => {
        const w = await open();
        // Both reconcilers read one clock the test moves: however slow the machine, the first's
        // Lease is live while the second is refused, and expired when the second tries again.
        let clock = Date.now();
        const now = () => new Date(clock);
        w.repo.commit({ "env/a.yaml": configMapYaml("a") });
        const first = w.reconciler({}, { ...lease("first", 2_000), now });
        expect((await first.cycle()).errors).toEqual([]);
        w.repo.commit({ "env/b.yaml": configMapYaml("b") });
        const second = w.reconciler({}, { ...lease("second"), now });
        const blocked = await second.cycle();
        expect(blocked.ok).toBe(false);
        expect(blocked.errors.join("\n")).toMatch(/another reconciler first holds the path env/);
        expect(w.counting.writes).toEqual([]);
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "b")).toBeUndefined();
        // The first never renews again: once its Lease's 2 s have passed the second takes the path.
        clock += 2_001;
        const taken = await second.cycle();
        expect(taken.errors).toEqual([]);
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "b")).toBeDefined();
        // Now the first is the one standing by.
        const standby = await first.cycle();
        expect(standby.errors.join("\n")).toMatch(/another reconciler second holds the path/);
      });

      it("a stopped reconciler releases the Lease, so the next one (a --once run) applies at once", async () => {
        const w = await open();
        w.repo.commit({ "env/a.yaml": configMapYaml("a") });
        const first = w.reconciler({}, lease("first"));
        expect((await first.cycle()).errors).toEqual([]);
        await first.stop();
        const next = w.reconciler({}, lease("next"));
        expect((await next.cycle()).errors).toEqual([]);
      });
    });

    describe("the applied revision", () => {
      it("a reader one commit behind applies but never prunes what the newer revision added, and says why", async () => {
        const w = await open();
        const older = w.repo.commit({ "env/a.yaml": configMapYaml("a") });
        w.repo.commit({ "env/new.yaml": configMapYaml("new") });
        expect((await w.reconciler().cycle()).errors).toEqual([]);
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "new")).toBeDefined();
        // A second source for the same path, pinned one commit behind (a lagging mirror).
        const staleSource = new ConfigRepoFetcher({
          repo: w.repo.dir,
          ref: older,
          workDir: w.temp.make("ferry-stale-"),
          env: GIT_ENV,
        });
        for (let cycle = 0; cycle < 5; cycle++) {
          const stale = w.reconciler({ pruneGraceCycles: 3 }, { source: staleSource });
          const result = await stale.cycle();
          expect(result.pruned).toEqual([]);
          expect(w.counting.deletes).toEqual([]);
          expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "new")).toBeDefined();
          if (cycle === 0) expect(result.notes?.join("\n")).toMatch(/does not contain the applied revision/);
          // The newer reader keeps its revision on record and prunes normally in between.
          const current = await w.reconciler().cycle();
          expect(current.errors).toEqual([]);
        }
      });

      it("follows a force-push after the grace period, remembered across restarts (--once runs)", async () => {
        const w = await open();
        const base = w.repo.commit({ "env/a.yaml": configMapYaml("a") });
        w.repo.commit({ "env/new.yaml": configMapYaml("new") });
        expect((await w.reconciler().cycle()).errors).toEqual([]);
        w.repo.git("reset", "-q", "--hard", base);
        w.repo.commit({ "env/other.yaml": configMapYaml("other") }, "rewritten history");
        const heldCycles: string[][] = [];
        for (let cycle = 0; cycle < 3; cycle++) {
          const result = await w.reconciler({ pruneGraceCycles: 2 }).cycle();
          heldCycles.push(result.pruned.map((ref) => ref.name));
          expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "other")).toBeDefined();
        }
        expect(heldCycles).toEqual([[], [], ["new"]]);
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "new")).toBeUndefined();
        expect((await inventoryOf(w)).grace).toBeUndefined();
      });
    });

    describe("intent before apply", () => {
      it("objects created by a cycle that dies before its inventory write are still pruned later", async () => {
        const w = await open();
        w.repo.commit({ "env/keep.yaml": configMapYaml("keep") });
        expect((await w.reconciler().cycle()).errors).toEqual([]);
        w.repo.commit({ "env/a.yaml": configMapYaml("a"), "env/b.yaml": configMapYaml("b") });
        const dying = new DyingCluster(w.admin, 1);
        const crashed = await w.reconciler({ concurrency: 1 }, { cluster: dying }).cycle();
        expect(crashed.ok).toBe(false);
        const created = ["a", "b"].filter((name) => dying.writes.includes(`apply ConfigMap ${w.ns}/${name}`));
        expect(created).toHaveLength(1);
        w.repo.commit({ "env/a.yaml": null, "env/b.yaml": null });
        const after = await w.reconciler().cycle();
        expect(after.errors).toEqual([]);
        expect(after.pruned.map((ref) => ref.name)).toEqual(created);
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, created[0]!)).toBeUndefined();
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "keep")).toBeDefined();
        expect((await inventoryOf(w)).intent).toBeUndefined();
      });
    });

    describe("the stored dry-run memory", () => {
      const OBJECTS = 1000;
      const files = () => {
        const out: Record<string, string> = {};
        const docs: string[] = [];
        for (let index = 0; index < OBJECTS - 10; index++)
          docs.push(configMapYaml(`cm-${index}`, { index: `${index}` }));
        out["env/config.yaml"] = docs.join("---\n");
        for (let index = 0; index < 10; index++)
          out[`env/web-${index}.yaml`] = deploymentYaml(`web-${index}`);
        return out;
      };

      it("a restarted --once no-op cycle at 1,000 objects makes at most 10 requests, no dry-run and no write but its Lease", async () => {
        const w = await open();
        w.repo.commit(files());
        const converging = w.reconciler({}, lease("converge"));
        const converge = await converging.cycle();
        expect(converge.errors).toEqual([]);
        expect(converge.applied).toHaveLength(OBJECTS);
        await converging.stop();
        const proxy = await startCountingProxy(backend.kubeconfig());
        try {
          const restarted = w.reconciler({}, { ...lease("restarted"), kubeconfig: proxy.kubeconfig });
          const result = await restarted.cycle();
          await restarted.stop();
          expect(result.errors).toEqual([]);
          expect(result.applied).toEqual([]);
          const described = proxy.requests.map((request) => `${request.method} ${request.path}`);
          expect(proxy.requests.filter((request) => request.dryRun)).toEqual([]);
          expect(
            described.filter(
              (line) => !line.startsWith("GET ") && !/\/leases\//.test(line) && !line.endsWith("/leases"),
            ),
          ).toEqual([]);
          expect(described.length, described.join("\n")).toBeLessThanOrEqual(10);
        } finally {
          await proxy.close();
        }
      });

      it("is not trusted for an object changed in the cluster, a changed desired object, or an inventory moved to another server", async () => {
        const w = await open();
        w.repo.commit({
          "env/a.yaml": configMapYaml("a", { v: "git" }),
          "env/b.yaml": configMapYaml("b", { v: "git" }),
          "env/web.yaml": deploymentYaml("web"),
        });
        expect((await w.reconciler().cycle()).errors).toEqual([]);
        // Changed in the cluster (its resourceVersion moves) while no reconciler runs.
        await w.kubectl.ok([
          "patch",
          "configmap",
          "a",
          "-n",
          w.ns,
          "--type=merge",
          "-p",
          '{"data":{"v":"edited"}}',
        ]);
        await w.kubectl.ok(["scale", "deployment", "web", "-n", w.ns, "--replicas=4"]);
        // Changed in Git.
        w.repo.commit({ "env/b.yaml": configMapYaml("b", { v: "new" }) });
        const restarted = await w.reconciler().cycle();
        expect(restarted.errors).toEqual([]);
        expect(restarted.applied.map((ref) => ref.name).sort()).toEqual(["a", "b", "web"]);
        expect((await readObject(w.admin, "v1", "ConfigMap", w.ns, "a"))?.data).toEqual({ v: "git" });

        // The inventory recreated (a restore, or a copy on another cluster): a new uid, so the memory is not this server's.
        const stored = (await readObject(w.admin, "v1", "ConfigMap", w.ns, inventoryName(w.instance)))!;
        await w.admin.delete({
          group: "",
          version: "v1",
          kind: "ConfigMap",
          namespace: w.ns,
          name: stored.metadata.name,
        });
        await w.kubectl.ok(["create", "-f", "-"], {
          stdin: JSON.stringify({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: stored.metadata.name, namespace: w.ns, labels: stored.metadata.labels },
            data: stored.data,
            binaryData: stored.binaryData,
          }),
        });
        const moved = w.reconciler();
        const result = await moved.cycle();
        expect(result.errors).toEqual([]);
        expect(w.counting.dryRuns).toBe(3);
        // Once re-checked, it is stored for this server and trusted again.
        const again = w.reconciler();
        expect((await again.cycle()).errors).toEqual([]);
        expect(w.counting.dryRuns).toBe(0);
      });

      it("an inventory written by the older format is read, its members pruned, and rewritten in the current one", async () => {
        const w = await open();
        w.repo.commit({ "env/a.yaml": configMapYaml("a") });
        expect((await w.reconciler().cycle()).errors).toEqual([]);
        await w.kubectl.ok(["apply", "-n", w.ns, "-f", "-"], {
          stdin: configMapYaml("old", { k: "v" }, `  labels: {ferry.dev/instance: ${w.instance}}\n`),
        });
        const name = inventoryName(w.instance);
        await w.admin.delete({ group: "", version: "v1", kind: "ConfigMap", namespace: w.ns, name });
        await w.kubectl.ok(["create", "-n", w.ns, "-f", "-"], {
          stdin: JSON.stringify({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name, labels: { "app.kubernetes.io/managed-by": "ferry" } },
            data: { entries: `_ConfigMap_${w.ns}_a|v1\n_ConfigMap_${w.ns}_old|v1\n` },
          }),
        });
        const result = await w.reconciler().cycle();
        expect(result.errors).toEqual([]);
        expect(result.pruned.map((ref) => ref.name)).toEqual(["old"]);
        expect(w.counting.dryRuns).toBe(1);
        const record = await inventoryOf(w);
        expect(record.members).toEqual([`_ConfigMap_${w.ns}_a|v1`]);
        expect(Object.keys(record.inSync)).toEqual([`_ConfigMap_${w.ns}_a`]);
      });

      it.each([
        {
          what: "an unreadable payload",
          binaryData: { "inventory.json.gz": Buffer.from("not gzip").toString("base64") },
          format: "ferry.dev/inventory-v2",
        },
        { what: "a format from a newer Ferry", binaryData: {}, format: "ferry.dev/inventory-v9" },
      ])("refuses $what: no write, no delete", async ({ binaryData, format }) => {
        const w = await open();
        w.repo.commit({ "env/a.yaml": configMapYaml("a"), "env/old.yaml": configMapYaml("old") });
        expect((await w.reconciler().cycle()).errors).toEqual([]);
        w.repo.commit({ "env/old.yaml": null });
        const name = inventoryName(w.instance);
        await w.kubectl.ok(
          ["apply", "--server-side", "--force-conflicts", "--field-manager=ferry", "-n", w.ns, "-f", "-"],
          {
            stdin: JSON.stringify({
              apiVersion: "v1",
              kind: "ConfigMap",
              metadata: { name, labels: { "app.kubernetes.io/managed-by": "ferry" } },
              data: { format },
              binaryData,
            }),
          },
        );
        const result = await w.reconciler().cycle();
        expect(result.ok).toBe(false);
        expect(result.phase).toBe("observe");
        expect(result.errors.join("\n")).toMatch(
          new RegExp(`ConfigMap ${w.ns}/${name}: .*refusing to reconcile`),
        );
        expect(w.counting.writes).toEqual([]);
        expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "old")).toBeDefined();
      });
    });
  });
}
