/**
 * The diff step, as data (docs/architecture.md "Plan, then execute"): desired objects, their live state, what a
 * server-side dry-run apply would make of them, and the stored inventory → a SyncPlan. Nothing
 * here calls an API; `--dry-run` prints the plan and the executor carries it out.
 */
import { UserError } from "../core/errors.js";
import { compareRefs, describeRef, inventoryKey } from "./object-ref.js";
import {
  CREATE_NAMESPACE_SOURCE,
  INSTANCE_LABEL,
  PRUNE_ANNOTATION,
  type DesiredObject,
} from "./desired-state.js";
import type { RefusedObject } from "./confinement.js";
import { guardContents, type OrphanContents } from "./prune-guard.js";
import { pruneDisabledByOption, waveOrZero } from "./sync-options.js";
import type { KubeObject, ObjectRef } from "./types.js";

export interface PruneOptions {
  /** `--prune`: delete inventory members that left Git (off by default, as in Argo CD). */
  prune: boolean;
  /** `--allow-empty`: let an empty render prune everything. */
  allowEmpty: boolean;
  /** Circuit breaker: the most objects one cycle may delete. */
  maxPrune: number;
  /** Circuit breaker: the largest share of the inventory (percent) one cycle may delete. */
  maxPrunePercent: number;
}

export const DEFAULT_PRUNE_OPTIONS: PruneOptions = {
  prune: false,
  allowEmpty: false,
  maxPrune: 10,
  maxPrunePercent: 30,
};

export interface ObservedObject {
  /** The object as it is in the cluster; undefined when it does not exist. */
  live?: KubeObject;
  /** What the API server would store if we applied the desired object (dryRun=All). */
  dryRun?: KubeObject;
}

export interface PlannedApply {
  ref: ObjectRef;
  object: KubeObject;
  action: "create" | "update";
  /** Paths that differ between live and the dry-run result, for humans (`spec.replicas`). */
  changedPaths: string[];
}

export type KeepReason =
  | "prune-disabled"
  | "has-owner"
  | "owned-by-another-instance"
  | "unlabelled"
  | "prune-off"
  | "circuit-breaker"
  | "out-of-scope"
  | "not-empty"
  | "revision-grace";

export interface SyncPlan {
  apply: PlannedApply[];
  /** Rendered objects outside the reconciler's confinement: not applied, and nothing is pruned. */
  refused: RefusedObject[];
  unchanged: ObjectRef[];
  /** Inventory members to delete, in delete order (reverse apply order). */
  prune: ObjectRef[];
  /** Inventory members that left Git but stay, and why (`detail`: what a human should know). */
  keep: { ref: ObjectRef; reason: KeepReason; detail?: string }[];
  /**
   * Set when the circuit breaker refused the prune: nothing is deleted this cycle, and nothing
   * outside the inventory is created either (`held`), so reverting the change that tripped it
   * leaves nothing behind to prune.
   */
  pruneBlocked?: string;
  /** Desired objects not in the inventory whose apply the tripped circuit breaker holds back. */
  held: ObjectRef[];
  /** The inventory to store once the plan has been carried out without error. */
  nextInventory: ObjectRef[];
}

/** Fields the API server owns; comparing them would report phantom drift every cycle. */
const SERVER_OWNED_METADATA = [
  "managedFields",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "uid",
  "selfLink",
];

export function comparable(object: KubeObject): Record<string, unknown> {
  // A JSON round trip turns client-side Date objects back into the strings the server sent.
  const copy = JSON.parse(JSON.stringify(object)) as Record<string, unknown> & {
    metadata?: Record<string, unknown>;
  };
  delete copy.status;
  if (copy.metadata) for (const field of SERVER_OWNED_METADATA) delete copy.metadata[field];
  return copy;
}

/** Dotted paths where two JSON values differ (at most `limit` of them). */
export function changedPaths(before: unknown, after: unknown, limit = 20, prefix = ""): string[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const paths: string[] = [];
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) {
      if (paths.length >= limit) break;
      paths.push(
        ...changedPaths(before[key], after[key], limit - paths.length, prefix ? `${prefix}.${key}` : key),
      );
    }
    return paths;
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    const paths: string[] = [];
    for (let index = 0; index < before.length && paths.length < limit; index++) {
      paths.push(...changedPaths(before[index], after[index], limit - paths.length, `${prefix}[${index}]`));
    }
    return paths;
  }
  return deepEqual(before, after) ? [] : [prefix || "."];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((item, index) => deepEqual(item, b[index]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const keysA = Object.keys(a).filter((key) => a[key] !== undefined);
    const keysB = Object.keys(b).filter((key) => b[key] !== undefined);
    return keysA.length === keysB.length && keysA.every((key) => deepEqual(a[key], b[key]));
  }
  return false;
}

function pruneVeto(live: KubeObject, instance: string): KeepReason | undefined {
  const { annotations = {}, labels = {}, ownerReferences } = live.metadata;
  if (annotations[PRUNE_ANNOTATION] === "disabled" || labels[PRUNE_ANNOTATION] === "disabled")
    return "prune-disabled";
  // Argo CD's `argocd.argoproj.io/sync-options: Prune=false` (and `ferry.dev/sync-options: Prune=false`).
  if (pruneDisabledByOption(live)) return "prune-disabled";
  if (Array.isArray(ownerReferences) && ownerReferences.length > 0) return "has-owner";
  // docs/reliability.md, reconciler rule 3: label plus inventory. Every object Ferry applies carries its instance
  // label, so one without it was detached by hand (or the inventory is wrong): never deleted.
  if (labels[INSTANCE_LABEL] === undefined) return "unlabelled";
  if (labels[INSTANCE_LABEL] !== instance) return "owned-by-another-instance";
  return undefined;
}

/** Why the circuit breaker refuses to delete `count` of `inventorySize` objects, or undefined. */
export function circuitBreakerVerdict(
  count: number,
  inventorySize: number,
  options: PruneOptions,
): string | undefined {
  if (count > options.maxPrune) {
    return `refusing to prune ${count} objects in one cycle (limit --max-prune ${options.maxPrune})`;
  }
  // A percentage of a tiny inventory would block the ordinary "remove one object" change,
  // so one deletion is always within the percentage rule.
  const allowed = Math.max(1, Math.floor((inventorySize * options.maxPrunePercent) / 100));
  if (count > allowed) {
    return `refusing to prune ${count} of ${inventorySize} inventory objects in one cycle (limit --max-prune-percent ${options.maxPrunePercent})`;
  }
  return undefined;
}

export interface SyncPlanInput {
  instance: string;
  desired: DesiredObject[];
  /** By inventory key, for every desired object. */
  observed: Map<string, ObservedObject>;
  inventory: ObjectRef[];
  /** Live state of inventory members that left Git, by inventory key; undefined = already gone. */
  orphansLive: Map<string, KubeObject | undefined>;
  options: PruneOptions;
  /** Rendered objects refused by the confinement. */
  refused?: RefusedObject[];
  /** Inventory members outside the confinement, by inventory key (no live state looked up). */
  outOfScope?: Map<string, string>;
  /** What deleting an orphan Namespace or CRD would take with it, by the orphan's inventory key. */
  orphanContents?: OrphanContents;
}

export function planSync(input: SyncPlanInput): SyncPlan {
  const { desired, observed, inventory, orphansLive, options, instance } = input;
  const refused = input.refused ?? [];
  // The Namespace --create-namespace adds does not make a render non-empty.
  const renderedCount =
    desired.filter(({ source }) => source !== CREATE_NAMESPACE_SOURCE).length + refused.length;
  if (renderedCount === 0 && options.prune && !options.allowEmpty && inventory.length > 0) {
    // Argo CD's rule: an empty render with prune on is far more often a mistake than an intent.
    throw new UserError(
      "empty-render",
      "the rendered config is empty; refusing to prune everything (use --allow-empty)",
    );
  }
  const apply: PlannedApply[] = [];
  const unchanged: ObjectRef[] = [];
  for (const { ref, object } of desired) {
    const seen = observed.get(inventoryKey(ref)) ?? {};
    if (!seen.live) {
      apply.push({ ref, object, action: "create", changedPaths: [] });
      continue;
    }
    // Without a dry-run result (e.g. a custom resource whose CRD this very cycle creates) apply to be sure.
    const paths = seen.dryRun ? changedPaths(comparable(seen.live), comparable(seen.dryRun)) : ["(unknown)"];
    if (paths.length === 0) unchanged.push(ref);
    else apply.push({ ref, object, action: "update", changedPaths: paths });
  }

  const desiredKeys = new Set(desired.map(({ ref }) => inventoryKey(ref)));
  const orphans = inventory.filter((ref) => !desiredKeys.has(inventoryKey(ref))).sort(compareRefs);
  const keep: SyncPlan["keep"] = [];
  const candidates: ObjectRef[] = [];
  const stillManaged: ObjectRef[] = [];
  for (const ref of orphans) {
    const key = inventoryKey(ref);
    if (input.outOfScope?.has(key)) {
      // Outside the confinement: Ferry may not touch it, so it is kept (and stays in the inventory).
      keep.push({ ref, reason: "out-of-scope" });
      stillManaged.push(ref);
      continue;
    }
    if (!orphansLive.has(key)) throw new Error(`bug: no live state looked up for orphan ${describeRef(ref)}`);
    const live = orphansLive.get(key);
    if (!live) continue; // already gone: drops out of the inventory
    const veto = pruneVeto(live, instance);
    if (veto) {
      // Vetoed objects leave the inventory: Ferry stops managing them, as Flux does.
      keep.push({ ref, reason: veto });
    } else if (!options.prune) {
      keep.push({ ref, reason: "prune-off" });
      stillManaged.push(ref);
    } else {
      candidates.push(ref);
    }
  }
  const guarded = guardContents(candidates, input.orphanContents);
  for (const { ref, detail } of guarded.refused) keep.push({ ref, reason: "not-empty", detail });
  stillManaged.push(...guarded.refused.map(({ ref }) => ref));
  let prune: ObjectRef[] = [];
  let pruneBlocked: string | undefined;
  let held: ObjectRef[] = [];
  let toApply = apply;
  if (guarded.candidates.length > 0) {
    // What the deletes would remove in all: the candidates and the custom resources of CRDs going with them.
    const total = guarded.candidates.length + guarded.extra;
    pruneBlocked = circuitBreakerVerdict(total, inventory.length + guarded.extra, options);
    if (pruneBlocked) {
      for (const ref of guarded.candidates) keep.push({ ref, reason: "circuit-breaker" });
      stillManaged.push(...guarded.candidates);
      // The other half of a mass rename: create none of the new names while the old ones stay.
      const inventoryKeys = new Set(inventory.map(inventoryKey));
      held = apply.filter(({ ref }) => !inventoryKeys.has(inventoryKey(ref))).map(({ ref }) => ref);
      toApply = apply.filter(({ ref }) => inventoryKeys.has(inventoryKey(ref)));
    } else {
      // Reverse apply order: the last wave first, and inside a wave the reverse of the kind ranks.
      const waveOf = (ref: ObjectRef) => waveOrZero(orphansLive.get(inventoryKey(ref)));
      prune = [...guarded.candidates].sort((a, b) => waveOf(a) - waveOf(b) || compareRefs(a, b)).reverse();
    }
  }
  const heldKeys = new Set(held.map(inventoryKey));
  const nextInventory = [
    ...desired.map(({ ref }) => ref).filter((ref) => !heldKeys.has(inventoryKey(ref))),
    ...stillManaged,
  ].sort(compareRefs);
  return {
    apply: toApply,
    refused,
    unchanged,
    prune,
    keep,
    held,
    nextInventory,
    ...(pruneBlocked ? { pruneBlocked } : {}),
  };
}

/** The plan as text, for `--dry-run` and logs. */
export function formatSyncPlan(plan: SyncPlan): string {
  const lines: string[] = [];
  for (const item of plan.apply) {
    const detail = item.changedPaths.length > 0 ? ` (${item.changedPaths.join(", ")})` : "";
    lines.push(`${item.action === "create" ? "create" : "update"} ${describeRef(item.ref)}${detail}`);
  }
  for (const { ref, reason } of plan.refused) lines.push(`refuse ${describeRef(ref)}: ${reason}`);
  for (const ref of plan.prune) lines.push(`prune ${describeRef(ref)}`);
  for (const { ref, reason, detail } of plan.keep)
    lines.push(`keep ${describeRef(ref)} (${reason}${detail ? `: ${detail}` : ""})`);
  for (const ref of plan.held) lines.push(`hold ${describeRef(ref)} (circuit-breaker)`);
  if (plan.pruneBlocked) lines.push(`prune blocked: ${plan.pruneBlocked}`);
  lines.push(
    `${plan.apply.length} to apply, ${plan.unchanged.length} unchanged, ${plan.prune.length} to prune` +
      (plan.refused.length > 0 ? `, ${plan.refused.length} refused` : ""),
  );
  return lines.join("\n") + "\n";
}
