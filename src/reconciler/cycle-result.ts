/**
 * A cycle's outcome as data: where it stopped, what it applied and pruned, and the sync and
 * health of every desired object (what `/status`, the metrics and the Deployment report show).
 */
import type { DriftRecord } from "./drift.js";
import type { DryRunSides } from "./dry-run-sides.js";
import type { ClusterPort } from "./ports.js";
import { isTransientError } from "../core/errors.js";
import type { CycleSettings } from "./cycle-settings.js";
import { aggregateHealth, assessHealth, groupKind } from "./health.js";
import { inventoryKey } from "./object-ref.js";
import type { Observation } from "./observe.js";
import type { SyncPlan } from "./plan.js";
import { ignoresExtraneous } from "./sync-options.js";
import type {
  HealthStatus,
  KubeObject,
  ObjectRef,
  ObjectStatus,
  StatusReporting,
  SyncStatus,
} from "./types.js";

import type { ChartDependencyPin } from "./chart-dependencies.js";

export type CyclePhase = "lease" | "fetch" | "render" | "observe" | "plan" | "apply" | "prune" | "done";

export interface CycleResult {
  ok: boolean;
  /** Where the cycle stopped: "done" when it ran to the end. */
  phase: CyclePhase;
  /** The revision this cycle tried (undefined when the fetch failed). */
  revision?: string;
  /** Set when every object of `revision` was applied (or already in sync). */
  appliedRevision?: string;
  plan?: SyncPlan;
  applied: ObjectRef[];
  pruned: ObjectRef[];
  sync: SyncStatus;
  health: HealthStatus;
  objects: ObjectStatus[];
  /** Changes made in the cluster, not in Git: undone by self-heal, or left (`--no-self-heal`). */
  drift?: { undone: DriftRecord[]; left: DriftRecord[] };
  errors: string[];
  /** True when the cycle failed in a way that may pass on retry (network, 5xx). */
  transient: boolean;
  /** Write requests made (applies, deletes, inventory). */
  writes: number;
  /** Things the cycle did differently and why (a held prune, an interrupted earlier cycle). */
  notes?: string[];
  /** Set when another reconciler holds the path's Lease: this one applied nothing. */
  standby?: string;
  /** A dry run's live objects and what applying its plan would make of them (`--dry-run --diff`). */
  dryRunSides?: DryRunSides;
  /** Charts the render downloaded (OCI registries, Helm HTTP repositories), pinned by digest. */
  charts?: ChartDependencyPin[];
}

export function failure(phase: CyclePhase, error: unknown, extra: Partial<CycleResult> = {}): CycleResult {
  return {
    ok: false,
    phase,
    applied: [],
    pruned: [],
    sync: "Unknown",
    health: "Degraded",
    objects: [],
    errors: [`${phase}: ${(error as Error).message}`],
    transient: isTransientError(error),
    writes: 0,
    ...extra,
  };
}

/** The result of a cycle that got as far as a plan. */
export function summarize(input: {
  revision: string;
  plan: SyncPlan;
  observation: Observation;
  settings: CycleSettings;
  liveAfter: Map<string, KubeObject>;
  applied: ObjectRef[];
  pruned: ObjectRef[];
  errors: string[];
  writes: number;
  phase: CyclePhase;
  dryRun: boolean;
  /** Per `group/kind`, whether its objects carry a status (`ClusterPort.statusReporting`). */
  statusKinds?: Map<string, StatusReporting | undefined>;
  /** Set when a sync wave waits for an earlier one: the deferred objects are OutOfSync, the result Progressing. */
  waiting?: { reason: string; deferred: ObjectRef[] };
}): CycleResult {
  const { revision, plan, observation, liveAfter, applied, pruned, errors, writes, phase, dryRun } = input;
  const appliedKeys = new Set(applied.map(inventoryKey));
  const pendingKeys = new Set(plan.apply.map((item) => inventoryKey(item.ref)));
  const heldKeys = new Set(plan.held.map(inventoryKey));
  const deferredKeys = new Set((input.waiting?.deferred ?? []).map(inventoryKey));
  const objects: ObjectStatus[] = observation.desired.map(({ ref }) => {
    const key = inventoryKey(ref);
    if (heldKeys.has(key))
      return { ref, sync: "OutOfSync", health: "Missing", message: "held by the circuit breaker" };
    if (deferredKeys.has(key))
      return { ref, sync: "OutOfSync", health: "Progressing", message: input.waiting!.reason };
    const synced = !pendingKeys.has(key) || appliedKeys.has(key);
    const live = liveAfter.get(key) ?? observation.observed.get(key)?.live;
    const health = assessHealth(live, (kind) => input.statusKinds?.get(kind));
    return { ref, sync: synced ? "Synced" : "OutOfSync", health: health.status, message: health.message };
  });
  for (const { ref, reason } of plan.refused) {
    objects.push({ ref, sync: "OutOfSync", health: "Unknown", message: `refused: ${reason}` });
  }
  for (const { ref, reason, detail } of plan.keep) {
    if (
      reason === "prune-off" ||
      reason === "circuit-breaker" ||
      reason === "not-empty" ||
      reason === "revision-grace"
    ) {
      const message = `requires pruning (${reason}${detail ? `: ${detail}` : ""})`;
      const live = observation.orphansLive.get(inventoryKey(ref));
      // IgnoreExtraneous: a live object Git no longer has does not make the environment OutOfSync.
      if (live && ignoresExtraneous(live))
        objects.push({ ref, sync: "Synced", health: "Healthy", message: `${message}; IgnoreExtraneous` });
      else objects.push({ ref, sync: "OutOfSync", health: "Healthy", message });
    }
  }
  const allErrors = [...errors];
  if (plan.pruneBlocked) allErrors.push(`prune: ${plan.pruneBlocked}`);
  const sync: SyncStatus =
    objects.every((object) => object.sync === "Synced") && allErrors.length === 0 ? "Synced" : "OutOfSync";
  const applyFailed = errors.some((error) => error.startsWith("apply:") || error.startsWith("refused:"));
  const aggregated = aggregateHealth(objects.map((object) => object.health));
  const waiting = input.waiting !== undefined;
  return {
    ok: allErrors.length === 0 && (dryRun || sync === "Synced"),
    phase,
    revision,
    ...(!dryRun && !applyFailed && !waiting ? { appliedRevision: revision } : {}),
    plan,
    applied,
    pruned,
    sync,
    health: applyFailed || aggregated === "Degraded" ? "Degraded" : waiting ? "Progressing" : aggregated,
    objects,
    errors: allErrors,
    transient: false,
    writes,
  };
}

/** Whether each kind in the desired state carries a status, asked once per kind (docs/architecture.md "Health"). */
export async function statusKindsOf(
  cluster: ClusterPort,
  desired: { ref: ObjectRef }[],
): Promise<Map<string, StatusReporting | undefined>> {
  const kinds = new Map<string, { apiVersion: string; kind: string }>();
  for (const { ref } of desired) {
    const apiVersion = ref.group === "" ? ref.version : `${ref.group}/${ref.version}`;
    kinds.set(groupKind(apiVersion, ref.kind), { apiVersion, kind: ref.kind });
  }
  const answers = new Map<string, StatusReporting | undefined>();
  if (!cluster.statusReporting) return answers;
  for (const [key, { apiVersion, kind }] of kinds)
    answers.set(key, await cluster.statusReporting(apiVersion, kind).catch(() => undefined));
  return answers;
}

/**
 * A cycle's errors for one log line: the first few as they are, then how many more and of which
 * kinds (a dead API server mid-apply fails every object with the same message).
 */
export function summarizeErrors(errors: string[], shown = 5): string[] {
  if (errors.length <= shown) return errors;
  const rest = errors.slice(shown);
  const kinds = new Map<string, number>();
  for (const error of rest) {
    // `apply: apply ConfigMap ns/name: connect ECONNREFUSED …` → `apply: connect ECONNREFUSED …`
    const kind = error.replace(/^(\w+): [^:]*: /, "$1: ").replace(/https?:\/\/\S+/g, "…");
    kinds.set(kind.slice(0, 200), (kinds.get(kind.slice(0, 200)) ?? 0) + 1);
  }
  const common = [...kinds].sort((a, b) => b[1] - a[1]).slice(0, 3);
  return [
    ...errors.slice(0, shown),
    `… and ${rest.length} more: ${common.map(([kind, count]) => `${count} × ${kind}`).join("; ")}`,
  ];
}
