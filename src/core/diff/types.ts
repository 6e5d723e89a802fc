/**
 * The rendered diff of one environment: what `ferry diff`, `ferry reconcile --dry-run --diff` and
 * the `ferry/diff` check run report. docs/diff.md.
 */

/** An object's identity in a diff: group (from apiVersion), kind, namespace, name; the version is shown, not compared. */
export interface ObjectKey {
  apiVersion: string;
  kind: string;
  /** Absent for cluster-scoped objects (and for namespaced ones that name none). */
  namespace?: string;
  name: string;
}

export interface SecretKeys {
  added: string[];
  changed: string[];
  removed: string[];
}

export interface ObjectChange {
  key: ObjectKey;
  kind: "added" | "removed" | "changed";
  /**
   * The unified diff of the normalized YAML (`--- base/…`, `+++ head/…`); a Secret's values and a
   * SealedSecret's encryptedData replaced by placeholders; absent for a SOPS-encrypted object.
   */
  unifiedDiff?: string;
  /** For a Secret: which keys of data/stringData were added, changed or removed (never their values). */
  secretKeys?: SecretKeys;
  /** Why the diff is not shown or is shortened ("SOPS-encrypted: …", "diff cut at 400 lines"). */
  note?: string;
}

export interface ImageChange {
  /** The image name (`ghcr.io/acme/shop`) as head writes it (base's for a removed container). */
  name: string;
  /** The tag before and after; absent when that side has none (or no such container). */
  from?: string;
  to?: string;
  fromDigest?: string;
  toDigest?: string;
  /** The container (or init container) whose image changed. */
  container?: string;
  /** Base's image name when head runs an image of another name in the same container. */
  fromName?: string;
  object: ObjectKey;
}

export type DangerReason =
  "prune" | "renders-empty" | "deletes-namespace" | "deletes-crd" | "deletes-pvc" | "immutable-field";

export interface Danger {
  reason: DangerReason;
  object?: ObjectKey;
  /** One line a reviewer can act on. */
  detail: string;
}

export interface EnvironmentDiff {
  /** Added, removed and changed objects, sorted by group, kind, namespace, name. */
  changes: ObjectChange[];
  images: ImageChange[];
  dangers: Danger[];
  /** Objects present on both sides and equal after normalization. */
  unchanged: number;
}

export interface DiffLimits {
  /** Objects with more YAML lines than this are compared but not line-diffed. */
  maxObjectLines: number;
  /** Most unified-diff lines kept per object. */
  maxDiffLines: number;
  /** Longer diff lines are cut. */
  maxLineChars: number;
  /** Myers' edit-distance cap per object (past it: removed-then-added middle, linear). */
  maxEditDistance: number;
  /** Myers steps for the whole environment (then every further diff takes the linear fallback). */
  maxDiffWork: number;
}

export const DEFAULT_DIFF_LIMITS: DiffLimits = {
  maxObjectLines: 20_000,
  maxDiffLines: 400,
  maxLineChars: 1_000,
  maxEditDistance: 1_000,
  maxDiffWork: 20_000_000,
};
