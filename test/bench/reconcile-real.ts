/**
 * The reconcile figures against kube-apiserver + etcd (built by `npm run cluster:build`), beside
 * the simulator's in `reconcile.ts`. Requests are counted by the API server itself: the difference
 * of `apiserver_request_total` on `/metrics` (writes: create/update/patch/delete without dry-run).
 * That counter also sees the server's own loopback reads (a few every 10 s, e.g. the `kubernetes`
 * Service's endpoints); its lease renewals are left out.
 * The control plane runs in its own processes, so the RSS here is the reconciler's alone.
 * Skipped, and said so, when the binaries are absent.
 */
import { rmSync } from "node:fs";
import { performance } from "node:perf_hooks";
import {
  apiRequest,
  controlPlaneMissingMessage,
  kubeconfigFor,
  startControlPlane,
  type ControlPlaneInfo,
} from "../cluster/control-plane.js";
import { applyFloorMs } from "./apply-floor.js";
import {
  benchConfigRepo,
  manifests,
  measureReconcile,
  OBJECTS,
  startBenchReconciler,
  type RequestCounter,
} from "./reconcile.js";
import { createNamespace, reconcileMemory } from "./reconcile-memory.js";
import { sized } from "./size.js";
import { BenchSkipped } from "./skipped.js";
import { median } from "./whole-process.js";

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

/**
 * Goal 1's ratio: `pairs` pairs of a whole first converge of the objects into a namespace of its
 * own (fetch, render, dry-runs, applies, inventory) and the floor's applies into another, in turns
 * (the floor first in one pair, second in the next), after one pair not counted that compiles both
 * sides' code. One run of each on a machine of two cores varies by a third; the median of the
 * pairs' ratios is the figure, the lowest and highest beside it.
 */
async function convergeBesideFloor(info: ControlPlaneInfo, pairs: number): Promise<Record<string, number>> {
  const { root, source } = benchConfigRepo();
  const kubeconfig = kubeconfigFor(info);
  const converges: number[] = [];
  const floors: number[] = [];
  try {
    for (let pair = -1; pair < pairs; pair++) {
      const name = `pair-${pair + 1}`;
      await createNamespace(info, `${name}-ferry`);
      await createNamespace(info, `${name}-floor`);
      const floor = () => applyFloorMs(info, manifests(), `${name}-floor`);
      const converge = async () => {
        const reconciler = startBenchReconciler(kubeconfig, source(name), name, `${name}-ferry`);
        const started = performance.now();
        const result = await reconciler.cycle();
        const ms = performance.now() - started;
        await reconciler.stop();
        if (result.errors.length > 0 || result.applied.length !== OBJECTS)
          throw new Error(`converge failed: ${result.errors[0] ?? `${result.applied.length} applied`}`);
        return ms;
      };
      let floorMs: number;
      let convergeMs: number;
      if (pair % 2 === 0) {
        floorMs = await floor();
        convergeMs = await converge();
      } else {
        convergeMs = await converge();
        floorMs = await floor();
      }
      if (pair < 0) continue;
      floors.push(floorMs);
      converges.push(convergeMs);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const ratios = converges.map((ms, index) => ms / floors[index]!);
  const prefix = "reconcile_real_apiserver";
  return {
    [`${prefix}.paired_converge_${OBJECTS}_objects_ms`]: median(converges),
    [`${prefix}.apply_floor_${OBJECTS}_objects_ms`]: median(floors),
    [`${prefix}.converge_over_apply_floor_${OBJECTS}_objects_ratio`]: median(ratios),
    [`${prefix}.converge_over_apply_floor_${OBJECTS}_objects_ratio_lowest`]: Math.min(...ratios),
    [`${prefix}.converge_over_apply_floor_${OBJECTS}_objects_ratio_highest`]: Math.max(...ratios),
    [`${prefix}.converge_over_apply_floor_pairs`]: pairs,
  };
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
    const paired = await convergeBesideFloor(controlPlane, sized(5, 1));
    return {
      ...figures,
      ...(await reconcileMemory(controlPlane, OBJECTS, LARGE)),
      ...paired,
      // The process's very first converge (its code not yet compiled) over the floor's median.
      [`reconcile_real_apiserver.first_converge_in_process_over_apply_floor_${OBJECTS}_objects_ratio`]:
        figures[`reconcile_real_apiserver.converge_${OBJECTS}_objects_ms`]! /
        paired[`reconcile_real_apiserver.apply_floor_${OBJECTS}_objects_ms`]!,
    };
  } finally {
    await controlPlane.stop();
  }
}
