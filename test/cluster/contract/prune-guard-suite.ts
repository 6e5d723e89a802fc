/**
 * What a prune takes with it, on both backends (`test/cluster/prune-guard.test.ts` against
 * kube-apiserver, `test/sandbox/cluster/prune-guard.test.ts` against the simulator): a Namespace
 * that still holds objects Ferry does not manage is not deleted, and the circuit breaker clears
 * by itself once the mass rename that tripped it is reverted.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { formatSyncPlan } from "../../../src/reconciler/plan.js";
import { configMapYaml, deploymentYaml } from "../../support/reconciler-harness.js";
import { readObject, type ClusterBackend } from "./backend.js";
import { crdYaml, namespaceYaml, widgetYaml } from "./manifests.js";
import { createWorld, type World } from "./world.js";

export function describePruneGuardContract(name: string, startBackend: () => Promise<ClusterBackend>): void {
  describe(`pruning against ${name}`, () => {
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

    it("does not delete a Namespace that left Git while it holds an object Ferry does not manage, and says so", async () => {
      const w = await open();
      const team = `${w.ns}-team`;
      w.repo.commit({
        "env/web.yaml": deploymentYaml("web"),
        "env/team.yaml": namespaceYaml(team),
        "env/team-config.yaml": configMapYaml("team-config", { a: "b" }, `  namespace: ${team}\n`),
      });
      // The dry-run reconciler first: `w.counting` counts the last one made.
      // A budget the two deletes fit in: only the guard can keep the Namespace.
      const prune = { maxPrunePercent: 100 };
      const dryRun = w.reconciler({ dryRun: true, prune });
      const reconciler = w.reconciler({ prune });
      expect((await reconciler.cycle()).errors).toEqual([]);
      // Someone else's object in the namespace Ferry created: the namespace controller would delete it with the Namespace.
      await w.kubectl.ok(["apply", "-n", team, "-f", "-"], {
        stdin: configMapYaml("manual", { keep: "me" }),
      });

      w.repo.commit({ "env/team.yaml": null, "env/team-config.yaml": null });
      const preview = await dryRun.cycle();
      expect(formatSyncPlan(preview.plan!)).toMatch(
        new RegExp(`keep Namespace ${team} \\(not-empty: .*ConfigMap ${team}/manual`),
      );

      w.counting.reset();
      const result = await reconciler.cycle();
      expect(w.counting.deletes.map((ref) => `${ref.kind} ${ref.name}`)).toEqual(["ConfigMap team-config"]);
      const namespace = await readObject(w.admin, "v1", "Namespace", "", team);
      expect(namespace?.metadata.deletionTimestamp).toBeUndefined();
      expect(await readObject(w.admin, "v1", "ConfigMap", team, "manual")).toBeDefined();
      expect(result.sync).toBe("OutOfSync");
      const entry = result.objects.find((object) => object.ref.kind === "Namespace");
      expect(entry).toMatchObject({ sync: "OutOfSync" });
      expect(entry?.message).toMatch(new RegExp(`not-empty: Namespace ${team} still holds 1 object.*manual`));
      expect(reconciler.status().objects.find((object) => object.kind === "Namespace")?.message).toMatch(
        /manual/,
      );

      // Once the namespace holds nothing else, the next cycle deletes it.
      await w.kubectl.ok(["delete", "configmap", "manual", "-n", team]);
      w.counting.reset();
      const after = await reconciler.cycle();
      expect(after.errors).toEqual([]);
      expect(w.counting.deletes.map((ref) => `${ref.kind} ${ref.name}`)).toEqual([`Namespace ${team}`]);
      // The simulator deletes at once; kube-apiserver leaves it Terminating for the namespace controller.
      const gone = await readObject(w.admin, "v1", "Namespace", "", team);
      expect(gone === undefined || gone.metadata.deletionTimestamp !== undefined).toBe(true);
    });

    it("counts a CustomResourceDefinition's custom resources against the circuit breaker", async () => {
      const w = await open();
      const group = `${w.id}.prune.ferry.test`;
      w.repo.commit({ "env/web.yaml": deploymentYaml("web"), "env/crd.yaml": crdYaml(group) });
      // Within the percentage: only the CRD's contents can trip the breaker.
      const reconciler = w.reconciler({ prune: { maxPrunePercent: 100 } });
      expect((await reconciler.cycle()).errors).toEqual([]);
      // Custom resources someone else made: deleting the CRD would delete them all.
      const widgets = Array.from({ length: 11 }, (_, index) => widgetYaml(group, `w-${index}`, "red"));
      await w.kubectl.ok(["apply", "-n", w.ns, "-f", "-"], { stdin: widgets.join("---\n") });

      w.repo.commit({ "env/crd.yaml": null });
      w.counting.reset();
      const result = await reconciler.cycle();
      expect(result.errors.join("\n")).toMatch(/refusing to prune 12 objects/);
      expect(w.counting.deletes).toEqual([]);
      expect(
        await readObject(
          w.admin,
          "apiextensions.k8s.io/v1",
          "CustomResourceDefinition",
          "",
          `widgets.${group}`,
        ),
      ).toBeDefined();
    });

    it("clears the circuit breaker by itself once a mass rename that tripped it is reverted", async () => {
      const w = await open();
      const files = (prefix: string) =>
        Object.fromEntries(
          Array.from({ length: 11 }, (_, index) => [
            `env/${prefix}-${index}.yaml`,
            configMapYaml(`${prefix}-${index}`),
          ]),
        );
      const removed = (prefix: string) =>
        Object.fromEntries(Object.keys(files(prefix)).map((file) => [file, null]));
      w.repo.commit({ "env/web.yaml": deploymentYaml("web"), ...files("old") });
      const reconciler = w.reconciler();
      expect((await reconciler.cycle()).errors).toEqual([]);

      w.repo.commit({ ...removed("old"), ...files("new") });
      w.counting.reset();
      const tripped = await reconciler.cycle();
      expect(tripped.errors.join("\n")).toMatch(/refusing to prune 11 objects/);
      expect(w.counting.deletes).toEqual([]);
      // The new names are held with the deletes: a revert has nothing left behind to prune.
      expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "new-0")).toBeUndefined();

      w.repo.commit({ ...removed("new"), ...files("old") });
      const reverted = await reconciler.cycle();
      expect(reverted.errors).toEqual([]);
      expect(reverted.ok || reverted.health === "Progressing").toBe(true);
      expect(reverted.sync).toBe("Synced");
      expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, "old-0")).toBeDefined();
    });
  });
}
