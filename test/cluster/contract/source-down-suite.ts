/**
 * Self-heal while the config repo is unreachable (docs/reliability.md row 57), on both backends:
 * the last good checkout is still on disk, so a change made in the cluster is undone from it, and
 * the cycle says since when the source is stale; once the repo answers again, the next cycle fetches.
 */
import { renameSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configMapYaml } from "../../support/reconciler-harness.js";
import { readObject, type ClusterBackend } from "./backend.js";
import { createWorld, type World } from "./world.js";

export function describeSourceDownContract(name: string, startBackend: () => Promise<ClusterBackend>): void {
  describe(`the config repo unreachable, against ${name}`, () => {
    let backend: ClusterBackend;
    let world: World;

    beforeAll(async () => {
      backend = await startBackend();
      world = await createWorld(backend);
    });
    afterAll(async () => {
      await world?.close();
      await backend?.close();
    });

    it("undoes drift from the last good revision and says since when the source is stale", async () => {
      world.repo.commit({ "env/config.yaml": configMapYaml("settings") });
      const reconciler = world.reconciler();
      const first = await reconciler.cycle();
      expect(first.errors).toEqual([]);

      // The repo goes away (a Git outage) and someone edits the ConfigMap by hand.
      const away = `${world.repo.dir}-away`;
      renameSync(world.repo.dir, away);
      await world.kubectl.ok([
        "patch",
        "-n",
        world.ns,
        "configmap",
        "settings",
        "--type=merge",
        "-p",
        JSON.stringify({ data: { key: "edited by hand" } }),
      ]);
      const during = await reconciler.cycle();
      expect(during.errors).toEqual([]);
      expect(during.revision).toBe(first.revision);
      expect(during.notes?.join("\n")).toMatch(
        /^config repo unreachable since \d{4}-\d\d-\d\dT[^:]+:\d\d:\d\d\.\d+Z: .+; healing from [0-9a-f]{7}, the last good revision$/m,
      );
      const healed = (await readObject(world.admin, "v1", "ConfigMap", world.ns, "settings")) as unknown as {
        data: Record<string, string>;
      };
      expect(healed.data.key).toBe("value");

      // Back again: the next cycle fetches, and the note is gone.
      renameSync(away, world.repo.dir);
      const back = await reconciler.cycle();
      expect(back.errors).toEqual([]);
      expect(back.notes?.join("\n") ?? "").not.toMatch(/unreachable/);
    });
  });
}
