/** What `GET /status` shows of a reconciler: the last cycle's outcome and the loop's state. */
import type { ChartDependencyPin } from "./chart-dependencies.js";
import type { DriftRecord } from "./drift.js";
import type { CycleResult } from "./cycle-result.js";
import type { HealthStatus, ObjectStatus, SyncStatus } from "./types.js";

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
  /** Manual changes undone in the last 24 h (object, field, live and Git value, field manager). */
  driftUndone?: DriftRecord[];
  /** Manual changes left in place by `--no-self-heal`, as of the last cycle. */
  driftLeft?: DriftRecord[];
  /** `prod: 2 manual changes undone in the last 24 h`. */
  driftSummary?: string;
  /** The chart dependencies the last render downloaded, each pinned by its manifest digest. */
  charts?: ChartDependencyPin[];
}

export function initialStatus(instance: string): ReconcilerStatus {
  return { instance, sync: "Unknown", health: "Unknown", objects: [], errors: [], consecutiveFailures: 0 };
}

function toStatusObjects(objects: ObjectStatus[]): ReconcilerStatus["objects"] {
  return objects.map(({ ref, sync, health, message }) => ({
    kind: ref.kind,
    group: ref.group,
    namespace: ref.namespace,
    name: ref.name,
    sync,
    health,
    message,
  }));
}

/** The status after a cycle: Flux's lastApplied / lastAttempted kept apart, failures counted. */
export function statusAfter(
  previous: ReconcilerStatus,
  instance: string,
  result: CycleResult,
  at: Date,
): ReconcilerStatus {
  const failed = !result.ok && result.errors.length > 0 && result.phase !== "done";
  return {
    instance,
    revision: result.revision ?? previous.revision,
    lastApplied: result.appliedRevision ?? previous.lastApplied,
    lastAttempted: result.revision ?? previous.lastAttempted,
    sync: result.sync,
    health: result.health,
    // After a failed fetch or render the last known objects stay visible, marked by the errors.
    objects: result.plan ? toStatusObjects(result.objects) : previous.objects,
    errors: result.errors,
    lastCycleAt: at.toISOString(),
    consecutiveFailures: failed ? previous.consecutiveFailures + 1 : 0,
    ...(result.charts ? { charts: result.charts } : {}),
  };
}
