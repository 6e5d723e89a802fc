/**
 * The reconcile figures against kube-apiserver + etcd (built by `npm run cluster:build`), beside
 * the simulator's in `reconcile.ts`. Requests are counted by the API server itself: the difference
 * of `apiserver_request_total` on `/metrics` (writes: create/update/patch/delete without dry-run).
 * That counter also sees the server's own loopback reads (a few every 10 s, e.g. the `kubernetes`
 * Service's endpoints); its lease renewals are left out.
 * The control plane runs in its own processes, so the RSS here is the reconciler's alone.
 * Skipped, and said so, when the binaries are absent.
 */
import {
  apiRequest,
  controlPlaneMissingMessage,
  kubeconfigFor,
  startControlPlane,
  type ControlPlaneInfo,
} from "../cluster/control-plane.js";
import { applyFloorMs } from "./apply-floor.js";
import { manifests, measureReconcile, OBJECTS, type RequestCounter } from "./reconcile.js";
import { reconcileMemory } from "./reconcile-memory.js";
import { sized } from "./size.js";
import { BenchSkipped } from "./skipped.js";

/** Issue #33's goals 1 and 3, printed beside the figures. */
const LARGE = sized(5000, 500);
export const targets: Record<string, string> = {
  [`reconcile_real_apiserver.converge_over_apply_floor_${OBJECTS}_objects_ratio`]: "<= 2",
  [`reconcile_real_apiserver.own_process_${OBJECTS}_objects.peak_rss_ratio`]: "<= 1.5",
  [`reconcile_real_apiserver.own_process_${LARGE}_over_${OBJECTS}_objects.ferry_peak_rss_ratio`]: `<= ${LARGE / OBJECTS} (linear)`,
  [`reconcile_real_apiserver.own_process_${LARGE}_over_${OBJECTS}_objects.ferry_time_ratio`]: `<= ${LARGE / OBJECTS} (linear)`,
};

const WRITE_VERBS = new Set([
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "APPLY",
  "CREATE",
  "UPDATE",
  "DELETECOLLECTION",
]);

/** Sums `apiserver_request_total` (all requests, and writes that were not dry-runs). */
async function requestTotals(info: ControlPlaneInfo): Promise<{ requests: number; writes: number }> {
  const { status, body } = await apiRequest(info, "GET", "/metrics", { timeoutMs: 30_000 });
  if (status !== 200) throw new Error(`GET /metrics: HTTP ${status}`);
  let requests = 0;
  let writes = 0;
  for (const line of body.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const labels = line.slice(line.indexOf("{") + 1, line.lastIndexOf("}"));
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    const verb = /(?:^|,)verb="([^"]*)"/.exec(labels)?.[1] ?? "";
    const dryRun = /(?:^|,)dry_run="([^"]*)"/.exec(labels)?.[1] ?? "";
    // kube-apiserver renews its own identity lease every 10 s over loopback: not the reconciler's.
    if (/(?:^|,)resource="leases"/.test(labels)) continue;
    requests += value;
    if (WRITE_VERBS.has(verb) && dryRun === "") writes += value;
  }
  return { requests, writes };
}

export async function bench(): Promise<Record<string, number>> {
  const missing = controlPlaneMissingMessage();
  if (missing) throw new BenchSkipped(`no real API server: ${missing}`);
  const controlPlane = await startControlPlane();
  try {
    const created = await apiRequest(controlPlane, "POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "bench" } },
    });
    if (created.status !== 201) throw new Error(`create namespace bench: HTTP ${created.status}`);
    let base = { requests: 0, writes: 0 };
    // The /metrics read itself is one request; leave it out of the figures.
    const counter: RequestCounter = {
      reset: async () => {
        base = await requestTotals(controlPlane);
      },
      count: async () => {
        const now = await requestTotals(controlPlane);
        return { requests: now.requests - base.requests - 1, writes: now.writes - base.writes };
      },
    };
    const figures = await measureReconcile(kubeconfigFor(controlPlane), counter, "reconcile_real_apiserver");
    const floor = await apiRequest(controlPlane, "POST", "/api/v1/namespaces", {
      body: { apiVersion: "v1", kind: "Namespace", metadata: { name: "bench-floor" } },
    });
    if (floor.status !== 201) throw new Error(`create namespace bench-floor: HTTP ${floor.status}`);
    const floorMs = await applyFloorMs(controlPlane, manifests(), "bench-floor");
    const convergeMs = figures[`reconcile_real_apiserver.converge_${OBJECTS}_objects_ms`]!;
    return {
      ...figures,
      ...(await reconcileMemory(controlPlane, OBJECTS, LARGE)),
      [`reconcile_real_apiserver.apply_floor_${OBJECTS}_objects_ms`]: floorMs,
      [`reconcile_real_apiserver.converge_over_apply_floor_${OBJECTS}_objects_ratio`]: convergeMs / floorMs,
    };
  } finally {
    await controlPlane.stop();
  }
}
