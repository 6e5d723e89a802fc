/**
 * Drift made visible: a field of an applied object that someone changed in the cluster while Git
 * did not (the desired object is the one last found in sync), as Argo CD's self-heal undoes it
 * (https://argo-cd.readthedocs.io/en/stable/user-guide/auto_sync/#automatic-self-healing) but
 * recorded: which object and field, the live and the Git value, and the field manager that wrote
 * it (from `metadata.managedFields`,
 * https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management). Pure.
 */
import { FIELD_MANAGER } from "./desired-state.js";
import type { DiffMemory } from "./diff-memory.js";
import { describeRef, inventoryKey } from "./object-ref.js";
import type { Observation } from "./observe.js";
import type { PlannedApply, SyncPlan } from "./plan.js";
import type { KubeObject } from "./types.js";

export interface DriftRecord {
  /** ISO time the reconciler saw it. */
  at: string;
  object: string;
  /** Dotted field path, `spec.replicas`. */
  field: string;
  live: string;
  git: string;
  /** Who wrote the live value, when the API server's managed fields say. */
  manager?: string;
}

/** Values are shown, bounded; a Secret's values never are (docs/security.md). */
const MAX_VALUE_CHARS = 200;

/** The planned updates that undo a change made in the cluster, not in Git, with one record per field. */
export function detectDrift(
  plan: SyncPlan,
  observation: Observation,
  memory: DiffMemory,
  now: Date,
): { drifted: PlannedApply[]; records: DriftRecord[] } {
  const drifted: PlannedApply[] = [];
  const records: DriftRecord[] = [];
  for (const planned of plan.apply) {
    if (planned.action !== "update") continue;
    const key = inventoryKey(planned.ref);
    if (!memory.wasInSyncWith(key, planned.object)) continue;
    const observed = observation.observed.get(key);
    if (observed?.live === undefined) continue;
    drifted.push(planned);
    for (const field of planned.changedPaths) {
      const record: DriftRecord = {
        at: now.toISOString(),
        object: describeRef(planned.ref),
        field,
        live: showValue(planned.ref.kind, valueAt(observed.live, field)),
        git: showValue(planned.ref.kind, valueAt(observed.dryRun ?? planned.object, field)),
      };
      const manager = managerOf(observed.live, field);
      if (manager !== undefined) record.manager = manager;
      records.push(record);
    }
  }
  return { drifted, records };
}

function valueAt(object: unknown, path: string): unknown {
  let current: unknown = object;
  for (const part of path.split(".")) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function showValue(kind: string, value: unknown): string {
  if (kind === "Secret") return "(hidden)";
  const text = value === undefined ? "(absent)" : JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

/** The manager (other than Ferry) whose managed fields hold `path`, or its nearest owned parent. */
function managerOf(live: KubeObject, path: string): string | undefined {
  const entries = (live.metadata as { managedFields?: unknown }).managedFields;
  if (!Array.isArray(entries)) return undefined;
  for (const entry of entries as { manager?: unknown; fieldsV1?: unknown }[]) {
    if (typeof entry.manager !== "string" || entry.manager === FIELD_MANAGER) continue;
    let fields: unknown = entry.fieldsV1;
    let owned = false;
    for (const part of path.split(".")) {
      if (typeof fields !== "object" || fields === null) break;
      fields = (fields as Record<string, unknown>)[`f:${part}`];
      if (fields === undefined) break;
      owned = true;
    }
    if (owned && fields !== undefined) return entry.manager;
  }
  return undefined;
}

/** `prod: 2 manual changes undone in the last 24 h`: drift records kept for a day, bounded. */
export class DriftLog {
  private records: DriftRecord[] = [];
  constructor(
    private readonly windowMs = 24 * 60 * 60 * 1000,
    private readonly max = 200,
  ) {}

  add(records: DriftRecord[]): void {
    this.records.push(...records);
    if (this.records.length > this.max) this.records.splice(0, this.records.length - this.max);
  }

  recent(now: Date): DriftRecord[] {
    const since = now.getTime() - this.windowMs;
    this.records = this.records.filter((record) => Date.parse(record.at) >= since);
    return [...this.records];
  }
}

export { describeDrift } from "../core/deployment-status.js";
