/**
 * How many TCP connections the reconciler opens to its API server, on both backends
 * (`test/cluster/connections.test.ts` against kube-apiserver, `test/sandbox/cluster/connections.test.ts`
 * against the simulator). A loopback TCP relay in front of the server counts the connections it
 * accepts while the reconciler converges N objects and runs a no-op cycle: the count is a small
 * bound, whatever N is, not one connection (and one TLS handshake) per request.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { eventually, readObject, type ClusterBackend } from "./backend.js";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";
import { createWorld, type World } from "./world.js";

const OBJECTS = 60;

/** Longer than any test runs: a test that passes did not wait for it. */
const HOUR = 3_600_000;

/** Requests share one connection; one more for a connection the server closed and had reopened. */
const BOUND = 2;

function configMaps(ns: string, count: number): string {
  return Array.from(
    { length: count },
    (_, i) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings-${i}\n  namespace: ${ns}\ndata:\n  index: "${i}"\n`,
  ).join("---\n");
}

export function describeConnectionContract(name: string, startBackend: () => Promise<ClusterBackend>): void {
  describe(`connections to ${name}`, () => {
    let backend: ClusterBackend;
    let world: World | undefined;
    let proxy: TcpProxy | undefined;

    beforeAll(async () => {
      backend = await startBackend();
    });
    afterAll(async () => {
      await backend?.close();
    });
    afterEach(async () => {
      await world?.close();
      await proxy?.close();
      world = undefined;
      proxy = undefined;
    });

    it(`converges ${OBJECTS} objects and runs a no-op cycle over at most ${BOUND} connections`, async () => {
      world = await createWorld(backend);
      const w = world;
      proxy = await startTcpProxy(new URL(backend.kubeconfig().match(/server: (\S+)/)![1]!));
      const kubeconfig = backend.kubeconfig().replace(/server: \S+/, `server: ${proxy.url}`);
      w.repo.commit({ "env/settings.yaml": configMaps(w.ns, OBJECTS) });
      const reconciler = w.reconciler({}, { kubeconfig });

      const converged = await reconciler.cycle();
      expect(converged.errors).toEqual([]);
      expect(w.counting.writes.filter((write) => write.includes("/settings-"))).toHaveLength(OBJECTS);
      await eventually(
        () => readObject(w.admin, "v1", "ConfigMap", w.ns, `settings-${OBJECTS - 1}`),
        (live) => live !== undefined,
        30_000,
        "the last ConfigMap",
      );

      w.counting.reset();
      const noop = await reconciler.cycle();
      expect(noop.errors).toEqual([]);
      expect(w.counting.writes).toEqual([]);

      // Each cycle made well over OBJECTS requests (a dry-run and an apply per object, lists, reads).
      expect(proxy.accepted()).toBeGreaterThanOrEqual(1);
      expect(proxy.accepted()).toBeLessThanOrEqual(BOUND);
    });

    it("heals drift through its watch with one more connection for the watch", async () => {
      world = await createWorld(backend);
      const w = world;
      proxy = await startTcpProxy(new URL(backend.kubeconfig().match(/server: (\S+)/)![1]!));
      const kubeconfig = backend.kubeconfig().replace(/server: \S+/, `server: ${proxy.url}`);
      w.repo.commit({ "env/settings.yaml": configMaps(w.ns, OBJECTS) });
      // One kind in one namespace: one watch; the timed loop never comes round within the test.
      const reconciler = w.reconciler({}, { kubeconfig, watch: true, intervalMs: HOUR, debounceMs: 100 });
      reconciler.start();
      await eventually(
        async () => reconciler.status().sync,
        (sync) => sync === "Synced",
        60_000,
        "the first cycle",
      );
      // Drift made by hand (as the admin, not through the relay) comes back through the watch.
      await w.admin.apply(
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "settings-0", namespace: w.ns },
          data: { index: "edited" },
        },
        { dryRun: false },
      );
      await eventually(
        () => readObject(w.admin, "v1", "ConfigMap", w.ns, "settings-0"),
        (live) => (live?.data as { index?: string } | undefined)?.index === "0",
        60_000,
        "the drift healed",
      );
      expect(proxy.accepted()).toBeGreaterThanOrEqual(2);
      expect(proxy.accepted()).toBeLessThanOrEqual(BOUND + 1);
    });

    it("leaves a connection that stopped answering at the request deadline and works on over a new one", async () => {
      world = await createWorld(backend);
      const w = world;
      proxy = await startTcpProxy(new URL(backend.kubeconfig().match(/server: (\S+)/)![1]!));
      const kubeconfig = backend.kubeconfig().replace(/server: \S+/, `server: ${proxy.url}`);
      w.repo.commit({ "env/settings.yaml": configMaps(w.ns, 3) });
      const reconciler = w.reconciler({}, { kubeconfig, requestTimeoutMs: 2_000 });
      expect((await reconciler.cycle()).errors).toEqual([]);

      // The open connection goes silent for good; a new one would be answered.
      proxy.freezeOpen();
      const stuck = await reconciler.cycle();
      expect(stuck.errors.join("\n")).toMatch(/no answer from the API server within 2 s/);
      const after = await reconciler.cycle();
      expect(after.errors).toEqual([]);
      expect(proxy.accepted()).toBe(2);
    });
  });
}
