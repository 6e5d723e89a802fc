/**
 * Prometheus metrics of one reconciler, in its own registry so several reconcilers (the sandbox
 * runs two) can live in one process without clashing.
 */
import { createRequire } from "node:module";
import type * as PromClient from "prom-client";
import type { CycleResult } from "./reconcile-cycle.js";
import type { HealthStatus, SyncStatus } from "./types.js";

// prom-client's own modules of the four classes used here, not its index: the index also loads its
// default metrics, cluster aggregation, push gateway and tracing, about 9 MB of a reconciler's
// memory (docs/capacity.md "The reconciler at 1,000 and 5,000 objects"). The same classes.
const requireHere = createRequire(import.meta.url);
const Counter = requireHere("prom-client/lib/counter.js") as typeof PromClient.Counter;
const Gauge = requireHere("prom-client/lib/gauge.js") as typeof PromClient.Gauge;
const Histogram = requireHere("prom-client/lib/histogram.js") as typeof PromClient.Histogram;
const Registry = requireHere("prom-client/lib/registry.js") as typeof PromClient.Registry;
/**
 * Node's process figures from prom-client's own default-metric modules, the cheap ones (about 1 MB
 * together; the event-loop, GC and heap-space ones cost several, the CPU one loads OpenTelemetry).
 * Registered at the first scrape, so a reconciler nobody scrapes (`--once`) does not load them.
 */
const PROCESS_METRICS = [
  "processStartTime", // process_start_time_seconds
  "osMemoryHeap", // process_resident_memory_bytes, process_virtual_memory_bytes, process_heap_bytes
  "processOpenFileDescriptors", // process_open_fds
  "processMaxFileDescriptors", // process_max_fds
  "heapSizeAndUsed", // nodejs_heap_size_total_bytes, nodejs_heap_size_used_bytes, nodejs_external_memory_bytes
  "version", // nodejs_version_info
];
type Counter<T extends string> = PromClient.Counter<T>;
type Gauge<T extends string> = PromClient.Gauge<T>;
type Histogram<T extends string> = PromClient.Histogram<T>;

const SYNC_STATUSES: SyncStatus[] = ["Synced", "OutOfSync", "Unknown"];
const HEALTH_STATUSES: HealthStatus[] = [
  "Healthy",
  "Progressing",
  "Degraded",
  "Missing",
  "Suspended",
  "Unknown",
];

export class ReconcilerMetrics {
  readonly registry = new Registry();
  private readonly cycles: Counter<"instance" | "result">;
  private readonly duration: Histogram<"instance">;
  private readonly applied: Counter<"instance">;
  private readonly pruned: Counter<"instance">;
  private readonly sync: Gauge<"instance" | "status">;
  private readonly health: Gauge<"instance" | "status">;
  private readonly objects: Gauge<"instance">;
  private readonly driftUndone: Counter<"instance">;
  private readonly driftLeft: Gauge<"instance">;
  private processMetrics = false;

  constructor(private readonly instance: string) {
    const registers = [this.registry];
    this.cycles = new Counter({
      name: "ferry_reconcile_cycles_total",
      help: "Reconcile cycles by result",
      labelNames: ["instance", "result"],
      registers,
    });
    this.duration = new Histogram({
      name: "ferry_reconcile_duration_seconds",
      help: "Duration of reconcile cycles",
      labelNames: ["instance"],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.applied = new Counter({
      name: "ferry_reconcile_applied_objects_total",
      help: "Objects applied",
      labelNames: ["instance"],
      registers,
    });
    this.pruned = new Counter({
      name: "ferry_reconcile_pruned_objects_total",
      help: "Objects pruned",
      labelNames: ["instance"],
      registers,
    });
    this.sync = new Gauge({
      name: "ferry_reconcile_sync_status",
      help: "1 for the current sync status",
      labelNames: ["instance", "status"],
      registers,
    });
    this.health = new Gauge({
      name: "ferry_reconcile_health_status",
      help: "1 for the current health status",
      labelNames: ["instance", "status"],
      registers,
    });
    this.driftUndone = new Counter({
      name: "ferry_reconcile_drift_undone_total",
      help: "Fields changed in the cluster, not in Git, that self-heal put back",
      labelNames: ["instance"],
      registers,
    });
    this.driftLeft = new Gauge({
      name: "ferry_reconcile_drift_left",
      help: "Fields changed in the cluster, not in Git, left in place (--no-self-heal)",
      labelNames: ["instance"],
      registers,
    });
    this.objects = new Gauge({
      name: "ferry_reconcile_objects",
      help: "Objects in the desired state",
      labelNames: ["instance"],
      registers,
    });
  }

  record(result: CycleResult, durationMs: number): void {
    this.driftUndone.inc({ instance: this.instance }, result.drift?.undone.length ?? 0);
    if (result.plan) this.driftLeft.set({ instance: this.instance }, result.drift?.left.length ?? 0);
    const instance = this.instance;
    this.cycles.inc({ instance, result: result.ok ? "success" : "failure" });
    this.duration.observe({ instance }, durationMs / 1000);
    this.applied.inc({ instance }, result.applied.length);
    this.pruned.inc({ instance }, result.pruned.length);
    for (const status of SYNC_STATUSES) this.sync.set({ instance, status }, status === result.sync ? 1 : 0);
    for (const status of HEALTH_STATUSES)
      this.health.set({ instance, status }, status === result.health ? 1 : 0);
    if (result.plan) this.objects.set({ instance }, result.objects.length);
  }

  text(): Promise<string> {
    if (!this.processMetrics) {
      this.processMetrics = true;
      for (const name of PROCESS_METRICS) {
        const register = requireHere(`prom-client/lib/metrics/${name}.js`) as (
          registry: PromClient.Registry,
        ) => void;
        register(this.registry);
      }
    }
    return this.registry.metrics();
  }
}
