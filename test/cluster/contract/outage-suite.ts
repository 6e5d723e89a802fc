/**
 * The reconciler when its API server stops answering, on both backends (`test/cluster/outage.test.ts`
 * against kube-apiserver, `test/sandbox/cluster/outage.test.ts` against the simulator). A loopback
 * TCP relay in front of the server freezes (connections open, no byte moves: a hung kube-apiserver
 * or etcd) or refuses connections (the server is down), then recovers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Reconciler } from "../../../src/reconciler/reconciler.js";
import { startStatusServer, type StatusServer } from "../../../src/adapters/http/reconciler-status-server.js";
import { deploymentYaml } from "../../support/reconciler-harness.js";
import { eventually, type ClusterBackend } from "./backend.js";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";
import { createWorld, type World } from "./world.js";

/** Longer than any test runs: a test that passes did not wait for it. */
const HOUR = 3_600_000;

export function describeOutageContract(name: string, startBackend: () => Promise<ClusterBackend>): void {
  describe(`an API server outage against ${name}`, () => {
    let backend: ClusterBackend;
    let world: World | undefined;
    let proxy: TcpProxy | undefined;
    let server: StatusServer | undefined;

    /** A world whose reconcilers reach the API server through the relay. */
    const open = async () => {
      world = await createWorld(backend);
      proxy = await startTcpProxy(new URL(backend.kubeconfig().match(/server: (\S+)/)![1]!));
      const kubeconfig = backend.kubeconfig().replace(/server: \S+/, `server: ${proxy.url}`);
      world.repo.commit({ "env/web.yaml": deploymentYaml("web") });
      return { w: world, relay: proxy, kubeconfig };
    };
    const healthz = async (reconciler: Reconciler) => {
      server ??= await startStatusServer(reconciler, { host: "127.0.0.1", port: 0 });
      const response = await fetch(`${server.url}/healthz`);
      return { status: response.status, text: await response.text() };
    };

    beforeAll(async () => {
      backend = await startBackend();
    });
    afterAll(async () => {
      await backend?.close();
    });
    afterEach(async () => {
      proxy?.thaw();
      proxy?.unblock();
      await server?.close();
      await world?.close();
      await proxy?.close();
      world = undefined;
      proxy = undefined;
      server = undefined;
    });

    it("ends a cycle against a frozen API server at the request deadline, Unknown and Degraded, and recovers after", async () => {
      const { w, relay, kubeconfig } = await open();
      const reconciler = w.reconciler({}, { kubeconfig, requestTimeoutMs: 2_000 });
      expect((await reconciler.cycle()).errors).toEqual([]);

      relay.freeze();
      const frozen = await reconciler.cycle();
      expect(frozen.ok).toBe(false);
      expect(frozen.transient).toBe(true);
      expect(frozen.errors.join("\n")).toMatch(/no answer from the API server within 2 s/);
      expect(reconciler.status()).toMatchObject({ sync: "Unknown", health: "Degraded" });

      relay.thaw();
      const after = await reconciler.cycle();
      expect(after.errors).toEqual([]);
      expect(reconciler.status().consecutiveFailures).toBe(0);
    });

    it("fails /healthz and reports Unknown/Degraded while a cycle is stuck past its deadline", async () => {
      const { w, relay, kubeconfig } = await open();
      const reconciler = w.reconciler({}, { kubeconfig, requestTimeoutMs: HOUR, cycleDeadlineMs: 1_000 });
      expect((await reconciler.cycle()).errors).toEqual([]);
      expect((await healthz(reconciler)).status).toBe(200);

      relay.freeze();
      const stuck = reconciler.cycle();
      const unhealthy = await eventually(
        () => healthz(reconciler),
        (answer) => answer.status === 503,
        60_000,
        "/healthz to fail",
      );
      expect(unhealthy.text).toMatch(/reconcile cycle still running after \d+ s \(deadline 1 s\)/);
      expect(reconciler.status()).toMatchObject({ sync: "Unknown", health: "Degraded" });
      expect(reconciler.status().errors[0]).toMatch(/still running/);

      relay.thaw();
      expect((await stuck).errors).toEqual([]);
      expect((await healthz(reconciler)).status).toBe(200);
      expect(reconciler.status().sync).toBe("Synced");
    });

    it("runs the next cycle as soon as a probe reaches the API server again, not at the end of the backoff", async () => {
      const { w, relay, kubeconfig } = await open();
      relay.block();
      const reconciler = w.reconciler(
        {},
        {
          kubeconfig,
          requestTimeoutMs: 5_000,
          intervalMs: HOUR,
          backoff: { baseMs: HOUR, maxMs: HOUR },
          probeIntervalMs: 100,
        },
      );
      reconciler.start();
      await eventually(
        async () => ({ failures: reconciler.status().consecutiveFailures, probes: w.counting.probes.failed }),
        ({ failures, probes }) => failures >= 1 && probes >= 1,
        60_000,
        "a failed cycle and a failed probe",
      );
      expect(reconciler.status().nextCycleInMs).toBeGreaterThan(HOUR / 2);

      relay.unblock();
      const status = await eventually(
        async () => reconciler.status(),
        (current) => current.consecutiveFailures === 0 && current.lastApplied !== undefined,
        60_000,
        "a cycle after the probe succeeded",
      );
      expect(status.errors).toEqual([]);
      expect(w.counting.probes.ok).toBeGreaterThan(0);
    });

    it("ends the backoff when a watch reconnects", async () => {
      const { w, relay, kubeconfig } = await open();
      const reconciler = w.reconciler(
        {},
        {
          kubeconfig,
          requestTimeoutMs: 5_000,
          intervalMs: HOUR,
          progressingIntervalMs: HOUR,
          backoff: { baseMs: HOUR, maxMs: HOUR },
          probeIntervalMs: HOUR,
          watch: true,
          // Only a reconnect may end the wait: no debounced event-driven cycle, no probe.
          debounceMs: HOUR,
        },
      );
      reconciler.start();
      await eventually(
        async () => ({ applied: reconciler.status().lastApplied, open: relay.open() }),
        ({ applied, open }) => applied !== undefined && open > 0,
        60_000,
        "the first cycle and its watch",
      );
      relay.block();
      // The next cycle fails while the server is unreachable; the loop then waits out its backoff.
      w.repo.commit({ "env/web.yaml": deploymentYaml("web", { replicas: 2 }) });
      await reconciler.cycle();
      expect(reconciler.status().consecutiveFailures).toBeGreaterThan(0);

      relay.unblock();
      await eventually(
        async () => reconciler.status(),
        (current) => current.consecutiveFailures === 0 && current.errors.length === 0,
        60_000,
        "a cycle after the watch reconnected",
      );
    });
  });
}
