/**
 * Sync waves on both backends (docs/architecture.md "Sync waves and opt-outs"): a wave-1 ConfigMap
 * is created only after the wave-0 custom resource is Healthy, which happens when the test (playing
 * its controller) writes Ready into its status; the order is read back from the API server's
 * resourceVersions.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readObject, type ClusterBackend } from "./backend.js";
import { gaugeCrdYaml } from "./health-suite.js";
import { createWorld, type World } from "./world.js";

export function describeWavesContract(name: string, startBackend: () => Promise<ClusterBackend>): void {
  describe(`sync waves against ${name}`, () => {
    let backend: ClusterBackend;
    let world: World;
    let group: string;

    beforeAll(async () => {
      backend = await startBackend();
      world = await createWorld(backend);
      group = `${world.id}.waves.ferry.test`;
      world.repo.commit({
        "env/kustomization.yaml":
          "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [crd.yaml, gauge.yaml, app.yaml]\n",
        "env/crd.yaml": gaugeCrdYaml(group),
        "env/gauge.yaml": `apiVersion: ${group}/v1\nkind: Gauge\nmetadata:\n  name: database\n  annotations:\n    argocd.argoproj.io/sync-wave: "0"\nspec:\n  level: 1\n`,
        "env/app.yaml":
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  annotations:\n    ferry.dev/sync-wave: "1"\ndata:\n  mode: live\n',
      });
    });
    afterAll(async () => {
      await world?.close();
      await backend?.close();
    });

    it("applies wave 1 only once wave 0 is healthy, in a later cycle, and the API server's resourceVersions show the order", async () => {
      const reconciler = world.reconciler();
      let result = await reconciler.cycle();
      // The CRD's kind may not be served on the first cycle: cycle until the Gauge exists.
      for (
        let i = 0;
        i < 20 && !result.objects.some((o) => o.ref.kind === "Gauge" && o.health !== "Missing");
        i++
      )
        result = await reconciler.cycle();
      expect(result.health).toBe("Progressing");
      expect(result.notes?.join("\n")).toMatch(
        /wave 1 waits: Gauge\.\S+ \S+\/database \(wave 0\) is Progressing/,
      );
      expect(result.objects.find((o) => o.ref.name === "app")).toMatchObject({ sync: "OutOfSync" });
      expect(await readObject(world.admin, "v1", "ConfigMap", world.ns, "app")).toBeUndefined();
      // Another cycle without status: still waiting, still no ConfigMap.
      result = await reconciler.cycle();
      expect(await readObject(world.admin, "v1", "ConfigMap", world.ns, "app")).toBeUndefined();

      await world.kubectl.ok([
        "patch",
        "-n",
        world.ns,
        `gauges.${group}`,
        "database",
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({
          status: { observedGeneration: 1, conditions: [{ type: "Ready", status: "True" }] },
        }),
      ]);
      const healthy = await readObject(world.admin, `${group}/v1`, "Gauge", world.ns, "database");
      result = await reconciler.cycle();
      expect(result.errors).toEqual([]);
      expect(result.health).toBe("Healthy");
      expect(result.sync).toBe("Synced");
      const app = await readObject(world.admin, "v1", "ConfigMap", world.ns, "app");
      expect(app).toBeDefined();
      // The ConfigMap was written after the status that made wave 0 healthy (etcd's revisions only grow).
      expect(Number(app!.metadata.resourceVersion)).toBeGreaterThan(
        Number(healthy!.metadata.resourceVersion),
      );
    });
  });
}
