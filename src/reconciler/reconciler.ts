/**
 * The reconciler process: runs a cycle every interval (with jitter), sooner while objects are
 * still Progressing, after watch events on applied objects (debounced), and with capped
 * exponential backoff after failures. Cycles never overlap. Keeps the last applied and last
 * attempted revisions apart (as Flux's `lastAppliedRevision` / `lastAttemptedRevision`).
 */
import { backoffDelay, DEFAULT_BACKOFF, jitteredInterval, type BackoffPolicy } from "./backoff.js";
import { deploymentReportOf } from "./deployment-report.js";
import { ReconcilerMetrics } from "./metrics.js";
import { describeRef } from "./object-ref.js";
import type { ClusterPort, ConfigSource, DeploymentReporter } from "./ports.js";
import { DiffMemory, runCycle, type CycleResult, type CycleSettings } from "./reconcile-cycle.js";
import type { HealthStatus, ObjectStatus, SyncStatus } from "./types.js";

export interface ReconcilerOptions {
  cluster: ClusterPort;
  source: ConfigSource;
  settings: CycleSettings;
  /** `--interval`: the regular cadence (default 2 minutes). */
  intervalMs?: number;
  /** How soon to look again while something is still Progressing (default 5 s). */
  progressingIntervalMs?: number;
  backoff?: BackoffPolicy;
  /** React to changes of applied objects (self-heal between intervals). */
  watch?: boolean;
  /** Coalesces bursts of watch events into one cycle (default 2 s). */
  debounceMs?: number;
  reporter?: DeploymentReporter;
  metrics?: ReconcilerMetrics;
  /** Structured events: a fixed message and fields (never secrets). */
  log?: (message: string, fields: Record<string, unknown>) => void;
  random?: () => number;
  now?: () => Date;
}

export interface ReconcilerStatus {
  instance: string;
  /** The revision of the last cycle that got as far as fetching. */
  revision?: string;
  lastApplied?: string;
  lastAttempted?: string;
  sync: SyncStatus;
  health: HealthStatus;
  objects: {
    kind: string;
    group: string;
    namespace: string;
    name: string;
    sync: SyncStatus;
    health: HealthStatus;
    message: string;
  }[];
  errors: string[];
  lastCycleAt?: string;
  consecutiveFailures: number;
  /** The wait before the next timed cycle, as last scheduled (backoff after failures). */
  nextCycleInMs?: number;
}

export interface Reconciler {
  /** Runs one cycle now (after any cycle in flight) and returns its result. */
  cycle(): Promise<CycleResult>;
  status(): ReconcilerStatus;
  /** Starts the timed loop (and watches); `startReconciler` does this unless `manual`. */
  start(): void;
  stop(): Promise<void>;
  readonly metrics: ReconcilerMetrics;
}

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const random = options.random ?? Math.random;
  const now = options.now ?? (() => new Date());
  const log = options.log ?? (() => {});
  const intervalMs = options.intervalMs ?? 120_000;
  const progressingMs = options.progressingIntervalMs ?? 5_000;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const debounceMs = options.debounceMs ?? 2_000;
  const metrics = options.metrics ?? new ReconcilerMetrics(options.settings.instance);

  let state: ReconcilerStatus = {
    instance: options.settings.instance,
    sync: "Unknown",
    health: "Unknown",
    objects: [],
    errors: [],
    consecutiveFailures: 0,
  };
  let inFlight: Promise<CycleResult> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let debounceTimer: NodeJS.Timeout | undefined;
  let running = false;
  const watches = new Map<string, () => void>();
  const memory = new DiffMemory();

  const toStatusObjects = (objects: ObjectStatus[]) =>
    objects.map(({ ref, sync, health, message }) => ({
      kind: ref.kind,
      group: ref.group,
      namespace: ref.namespace,
      name: ref.name,
      sync,
      health,
      message,
    }));

  async function runOne(): Promise<CycleResult> {
    const started = performance.now();
    const result = await runCycle(options.cluster, options.source, options.settings, memory);
    const durationMs = performance.now() - started;
    metrics.record(result, durationMs);
    const failed = !result.ok && result.errors.length > 0 && result.phase !== "done";
    state = {
      instance: options.settings.instance,
      revision: result.revision ?? state.revision,
      lastApplied: result.appliedRevision ?? state.lastApplied,
      lastAttempted: result.revision ?? state.lastAttempted,
      sync: result.sync,
      health: result.health,
      // After a failed fetch or render the last known objects stay visible, marked by the errors.
      objects: result.plan ? toStatusObjects(result.objects) : state.objects,
      errors: result.errors,
      lastCycleAt: now().toISOString(),
      consecutiveFailures: failed ? state.consecutiveFailures + 1 : 0,
    };
    log(result.ok ? "reconcile cycle finished" : "reconcile cycle failed", {
      instance: options.settings.instance,
      revision: result.revision,
      phase: result.phase,
      applied: result.applied.length,
      pruned: result.pruned.length,
      sync: result.sync,
      health: result.health,
      errors: result.errors,
      ms: Math.round(durationMs),
    });
    if (options.reporter && !options.settings.dryRun) {
      const report = deploymentReportOf(result);
      if (report) {
        await options.reporter.report(report).catch((error: unknown) => {
          log("deployment status report failed", {
            instance: options.settings.instance,
            error: (error as Error).message,
          });
        });
      }
    }
    if (options.watch && result.plan && options.cluster.watch) await ensureWatches(result);
    return result;
  }

  async function ensureWatches(result: CycleResult): Promise<void> {
    const watch = options.cluster.watch!.bind(options.cluster);
    const wanted = new Map<string, { apiVersion: string; kind: string; namespace: string | undefined }>();
    for (const { ref } of result.objects) {
      const apiVersion = ref.group ? `${ref.group}/${ref.version}` : ref.version;
      wanted.set(`${apiVersion} ${ref.kind} ${ref.namespace}`, {
        apiVersion,
        kind: ref.kind,
        namespace: ref.namespace || undefined,
      });
    }
    for (const [key, stop] of watches) {
      if (!wanted.has(key)) {
        stop();
        watches.delete(key);
      }
    }
    for (const [key, { apiVersion, kind, namespace }] of wanted) {
      if (watches.has(key) || !running) continue;
      try {
        watches.set(
          key,
          await watch(
            apiVersion,
            kind,
            namespace,
            `ferry.dev/instance=${options.settings.instance}`,
            onWatchEvent,
          ),
        );
      } catch (error) {
        log("watch failed", {
          instance: options.settings.instance,
          kind,
          namespace,
          error: (error as Error).message,
        });
      }
    }
  }

  function onWatchEvent(): void {
    // While backing off after failures, events must not shorten the wait.
    if (!running || state.consecutiveFailures > 0) return;
    clearTimeout(debounceTimer);
    debounceTimer = setTimeout(() => {
      if (running) schedule(0);
    }, debounceMs);
    debounceTimer.unref?.();
  }

  function cycle(): Promise<CycleResult> {
    const previous = inFlight ?? Promise.resolve(undefined);
    const next = previous.catch(() => undefined).then(runOne);
    inFlight = next;
    void next.finally(() => {
      if (inFlight === next) inFlight = undefined;
    });
    return next;
  }

  function nextDelay(result: CycleResult | undefined): number {
    if (state.consecutiveFailures > 0) return backoffDelay(state.consecutiveFailures, backoff, random());
    if (result && (result.health === "Progressing" || result.health === "Missing"))
      return Math.min(progressingMs, intervalMs);
    return jitteredInterval(intervalMs, random());
  }

  function schedule(delayMs: number): void {
    clearTimeout(timer);
    if (!running) return;
    state = { ...state, nextCycleInMs: delayMs };
    if (state.consecutiveFailures > 0) {
      log("reconcile backing off", {
        instance: options.settings.instance,
        failures: state.consecutiveFailures,
        retryInMs: delayMs,
      });
    }
    timer = setTimeout(() => {
      void cycle().then(
        (result) => schedule(nextDelay(result)),
        (error: unknown) => {
          log("reconcile cycle crashed", {
            instance: options.settings.instance,
            error: (error as Error).message,
          });
          state = {
            ...state,
            consecutiveFailures: state.consecutiveFailures + 1,
            errors: [(error as Error).message],
          };
          schedule(nextDelay(undefined));
        },
      );
    }, delayMs);
  }

  return {
    cycle,
    status: () => structuredClone(state),
    start() {
      if (running) return;
      running = true;
      schedule(0);
    },
    async stop() {
      running = false;
      clearTimeout(timer);
      clearTimeout(debounceTimer);
      for (const stopWatch of watches.values()) stopWatch();
      watches.clear();
      await inFlight?.catch(() => undefined);
    },
    metrics,
  };
}

export function describeObjects(result: CycleResult): string[] {
  return result.objects.map(
    (object) =>
      `${describeRef(object.ref)}: ${object.sync}, ${object.health}${object.message ? ` (${object.message})` : ""}`,
  );
}
