/**
 * The reconciler process: runs a cycle every interval (with jitter), sooner while objects are
 * still Progressing, after watch events on applied objects (debounced), and with capped
 * exponential backoff after failures. Cycles never overlap. Keeps the last applied and last
 * attempted revisions apart (as Flux's `lastAppliedRevision` / `lastAttemptedRevision`).
 */
import { backoffDelay, DEFAULT_BACKOFF, jitteredInterval, type BackoffPolicy } from "./backoff.js";
import { deploymentReportOf } from "./deployment-report.js";
import { describeDrift, DriftLog } from "./drift.js";
import { ReconcilerMetrics } from "./metrics.js";
import { summarizeErrors } from "./cycle-result.js";
import { describeRef } from "./object-ref.js";
import type { ClusterPort, ConfigSource, DeploymentReporter } from "./ports.js";
import { DiffMemory, runCycle, type CycleResult, type CycleSettings } from "./reconcile-cycle.js";
import { initialStatus, statusAfter, type ReconcilerStatus } from "./reconciler-status.js";
import { WatchSet } from "./watch-set.js";
import { failure } from "./cycle-result.js";
import { acquirePathLease, pathLeaseName, releasePathLease, type LeaseSettings } from "./path-lease.js";
import type { LeaseRecord } from "./ports.js";

export type { ReconcilerStatus } from "./reconciler-status.js";

export interface ReconcilerOptions {
  cluster: ClusterPort;
  source: ConfigSource;
  settings: CycleSettings;
  /** `--interval`: the regular cadence (default 2 minutes). */
  intervalMs?: number;
  /** How soon to look again while something is still Progressing (default 5 s). */
  progressingIntervalMs?: number;
  backoff?: BackoffPolicy;
  /**
   * While backing off, how often to ask the API server whether it answers again (default 5 s):
   * once a probe that failed succeeds, the next cycle runs at once instead of at the end of the wait.
   */
  probeIntervalMs?: number;
  /** A cycle running longer than this is reported Unknown/Degraded and fails `/healthz` (default 10 minutes). */
  cycleDeadlineMs?: number;
  /** React to changes of applied objects (self-heal between intervals). */
  watch?: boolean;
  /** Coalesces bursts of watch events into one cycle (default 2 s). */
  debounceMs?: number;
  reporter?: DeploymentReporter;
  metrics?: ReconcilerMetrics;
  /**
   * One writer per path and cluster: hold the path's Lease while applying (docs/architecture.md
   * "The inventory"). Unset: no Lease (embedding callers that ensure a single writer otherwise).
   */
  lease?: LeaseSettings;
  /** Structured events: a fixed message and fields (never secrets). */
  log?: (message: string, fields: Record<string, unknown>) => void;
  random?: () => number;
  now?: () => Date;
}

export interface Reconciler {
  /** Runs one cycle now (after any cycle in flight) and returns its result. */
  cycle(): Promise<CycleResult>;
  status(): ReconcilerStatus;
  /** What `/healthz` answers: false while a cycle is stuck past its deadline. */
  health(): { ok: boolean; message: string };
  /** Starts the timed loop (and watches); `startReconciler` does this unless `manual`. */
  start(): void;
  stop(): Promise<void>;
  readonly metrics: ReconcilerMetrics;
}

export function createReconciler(options: ReconcilerOptions): Reconciler {
  const { instance } = options.settings;
  const random = options.random ?? Math.random;
  const now = options.now ?? (() => new Date());
  const log = options.log ?? (() => {});
  const intervalMs = options.intervalMs ?? 120_000;
  const progressingMs = options.progressingIntervalMs ?? 5_000;
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const debounceMs = options.debounceMs ?? 2_000;
  const metrics = options.metrics ?? new ReconcilerMetrics(instance);
  const probeIntervalMs = options.probeIntervalMs ?? 5_000;
  const cycleDeadlineMs = options.cycleDeadlineMs ?? 10 * 60_000;

  let state: ReconcilerStatus = initialStatus(instance);
  let inFlight: Promise<CycleResult> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let debounceTimer: NodeJS.Timeout | undefined;
  let running = false;
  let cycleStartedAt: number | undefined;
  let probeTimer: NodeJS.Timeout | undefined;
  /** A probe failed since the last cycle: the API server was unreachable, so its answer is news. */
  let serverDown = false;
  const memory = new DiffMemory();
  const driftLog = new DriftLog();
  const watches =
    options.watch && options.cluster.watch
      ? new WatchSet(options.cluster.watch.bind(options.cluster), instance, onWatchEvent, log, () =>
          onWatchReconnect(),
        )
      : undefined;

  let heldLease: LeaseRecord | undefined;

  /** Takes or renews the Lease; a result when another reconciler holds it (nothing else is done). */
  async function standbyResult(): Promise<CycleResult | undefined> {
    if (!options.lease || options.settings.dryRun) return undefined;
    const namespace = options.settings.inventoryNamespace;
    const name = pathLeaseName(instance, options.settings.path);
    let outcome;
    try {
      outcome = await acquirePathLease(options.cluster, namespace, name, options.lease, now().getTime());
    } catch (error) {
      return failure("lease", error);
    }
    if (!outcome) return undefined;
    if (outcome.held) {
      heldLease = outcome.record;
      return undefined;
    }
    heldLease = undefined;
    const message = `another reconciler ${outcome.holder} holds the path ${options.settings.path} (Lease ${namespace}/${name}); not applying`;
    return {
      ...failure("lease", new Error(message)),
      errors: [`lease: ${message}`],
      transient: true,
      standby: outcome.holder,
    };
  }

  async function runOne(): Promise<CycleResult> {
    const started = performance.now();
    cycleStartedAt = started;
    serverDown = false;
    let result: CycleResult;
    try {
      result =
        (await standbyResult()) ??
        (await runCycle(options.cluster, options.source, options.settings, memory));
    } finally {
      cycleStartedAt = undefined;
    }
    const durationMs = performance.now() - started;
    metrics.record(result, durationMs);
    state = statusAfter(state, instance, result, now());
    driftLog.add(result.drift?.undone ?? []);
    const undone = driftLog.recent(now());
    state.driftUndone = undone;
    state.driftSummary = `${instance}: ${describeDrift(undone.length)}`;
    if (result.drift?.left.length) state.driftLeft = result.drift.left;
    log(result.ok ? "reconcile cycle finished" : "reconcile cycle failed", {
      instance,
      revision: result.revision,
      phase: result.phase,
      applied: result.applied.length,
      pruned: result.pruned.length,
      sync: result.sync,
      health: result.health,
      errors: summarizeErrors(result.errors),
      ...(result.notes ? { notes: result.notes } : {}),
      ms: Math.round(durationMs),
    });
    if (options.reporter && !options.settings.dryRun && !result.standby)
      await report(options.reporter, result, undone.length);
    if (watches && result.plan) await watches.update(result, () => running);
    return result;
  }

  async function report(
    reporter: DeploymentReporter,
    result: CycleResult,
    undoneLastDay: number,
  ): Promise<void> {
    const report = deploymentReportOf(result, { undoneLastDay });
    if (!report) return;
    await reporter.report(report).catch((error: unknown) => {
      log("deployment status report failed", { instance, error: (error as Error).message });
    });
  }

  /** A watch opened again after it broke: the API server answers, so a backoff has no reason left. */
  function onWatchReconnect(): void {
    if (running && state.consecutiveFailures > 0 && !inFlight) {
      log("watch reconnected; reconciling now", { instance });
      schedule(0);
    }
  }

  function probeWhileBackingOff(): void {
    clearTimeout(probeTimer);
    const probe = options.cluster.probe?.bind(options.cluster);
    if (!probe || !running || state.consecutiveFailures === 0) return;
    probeTimer = setTimeout(() => {
      if (!running || state.consecutiveFailures === 0 || inFlight) return;
      probe().then(
        () => {
          if (serverDown && running && !inFlight) {
            log("API server answers again; reconciling now", { instance });
            schedule(0);
          } else probeWhileBackingOff();
        },
        () => {
          serverDown = true;
          probeWhileBackingOff();
        },
      );
    }, probeIntervalMs);
    probeTimer.unref?.();
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
    if (state.consecutiveFailures > 0 && delayMs > 0) {
      log("reconcile backing off", { instance, failures: state.consecutiveFailures, retryInMs: delayMs });
      probeWhileBackingOff();
    }
    timer = setTimeout(() => {
      void cycle().then(
        (result) => schedule(nextDelay(result)),
        (error: unknown) => {
          log("reconcile cycle crashed", { instance, error: (error as Error).message });
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

  /** Set while the cycle in flight is past its deadline. */
  function overdue(): string | undefined {
    if (cycleStartedAt === undefined) return undefined;
    const elapsed = performance.now() - cycleStartedAt;
    if (elapsed <= cycleDeadlineMs) return undefined;
    return `reconcile cycle still running after ${Math.round(elapsed / 1000)} s (deadline ${Math.round(cycleDeadlineMs / 1000)} s): the API server or the config repo does not answer`;
  }

  return {
    cycle,
    status() {
      const stuck = overdue();
      const current = structuredClone(state);
      return stuck
        ? { ...current, sync: "Unknown", health: "Degraded", errors: [stuck, ...current.errors] }
        : current;
    },
    health() {
      const stuck = overdue();
      return stuck ? { ok: false, message: stuck } : { ok: true, message: "ok" };
    },
    start() {
      if (running) return;
      running = true;
      schedule(0);
    },
    async stop() {
      running = false;
      clearTimeout(timer);
      clearTimeout(probeTimer);
      clearTimeout(debounceTimer);
      watches?.stopAll();
      await inFlight?.catch(() => undefined);
      if (heldLease) await releasePathLease(options.cluster, heldLease, now().getTime());
      heldLease = undefined;
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
