/**
 * The data the reconciler passes between its steps (render → diff → apply → prune → health →
 * report). Plain JSON-like values so every step can be a pure function with table tests.
 */

export type { KubeObject } from "../core/kube-object.js";

/** Identifies one object across revisions: group (empty for the core group), kind, namespace, name. */
export interface ObjectRef {
  group: string;
  /** The version the object was written with; not part of its identity. */
  version: string;
  kind: string;
  /** Empty for cluster-scoped objects. */
  namespace: string;
  name: string;
}

export type SyncStatus = "Synced" | "OutOfSync" | "Unknown";
export type HealthStatus = "Healthy" | "Progressing" | "Degraded" | "Missing" | "Suspended" | "Unknown";

export interface HealthReport {
  status: HealthStatus;
  message: string;
}

/** Per-object state shown by `GET /status`. */
export interface ObjectStatus {
  ref: ObjectRef;
  sync: SyncStatus;
  health: HealthStatus;
  message: string;
}

/** Whether a kind's objects carry a status ("reports": a status subresource or `status` in its schema). */
export type StatusReporting = "reports" | "silent";
