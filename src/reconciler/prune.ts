/**
 * The prune step and the inventory write that closes a cycle. After an apply error (or a refused
 * object) nothing is deleted and the inventory only grows (docs/reliability.md, reconciler rule 1: never prune
 * on an error); otherwise the plan's prunes run in order and objects whose delete failed stay in the inventory
 * for a later cycle. The record is written only when it changed.
 */
import { isTransientError } from "../core/errors.js";
import { inventoryEntries, writeInventory } from "./inventory.js";
import { sameInventory, type InventoryRecord } from "./inventory-schema.js";
import { inventoryKey } from "./object-ref.js";
import type { SyncPlan } from "./plan.js";
import type { ClusterPort } from "./ports.js";
import type { PropagationPolicy } from "./sync-options.js";
import type { ObjectRef } from "./types.js";

export interface PruneOutcome {
  pruned: ObjectRef[];
  /** `prune: …` and `inventory: …` lines. */
  errors: string[];
  writes: number;
  transient: boolean;
  /** The inventory's uid after the write (undefined when nothing was written). */
  uid?: string;
}

export async function pruneAndRecord(
  cluster: ClusterPort,
  input: {
    plan: SyncPlan;
    /** The members before this cycle's prune (with what the intent added). */
    inventory: ObjectRef[];
    /** The record as last written, to skip a write that would change nothing. */
    stored: InventoryRecord;
    /** Everything but the members to store. */
    next: (members: string[]) => InventoryRecord;
    inventoryNamespace: string;
    instance: string;
    /** What the apply step wrote. */
    applied: ObjectRef[];
    /** After an apply error or a refused object: delete nothing, only record what was applied. */
    holdPrune: boolean;
    /** The DELETE's propagationPolicy for each pruned object; throws for an invalid per-object choice. */
    propagation?: (ref: ObjectRef) => PropagationPolicy;
  },
): Promise<PruneOutcome> {
  const { plan } = input;
  const outcome: PruneOutcome = { pruned: [], errors: [], writes: 0, transient: false };
  let inventory: ObjectRef[];
  if (input.holdPrune) {
    // Record what now exists in the cluster, drop nothing: a later cycle can still prune it.
    const known = new Map(input.inventory.map((ref) => [inventoryKey(ref), ref]));
    for (const ref of input.applied) known.set(inventoryKey(ref), ref);
    inventory = [...known.values()];
  } else {
    for (const ref of plan.prune) {
      outcome.writes++;
      try {
        await cluster.delete(ref, { propagationPolicy: input.propagation?.(ref) ?? "Background" });
        outcome.pruned.push(ref);
      } catch (error) {
        outcome.transient ||= isTransientError(error);
        outcome.errors.push(`prune: ${(error as Error).message}`);
      }
    }
    const prunedKeys = new Set(outcome.pruned.map(inventoryKey));
    // Objects whose delete failed stay in the inventory, to be pruned on a later cycle.
    inventory = [...plan.nextInventory, ...plan.prune.filter((ref) => !prunedKeys.has(inventoryKey(ref)))];
  }
  const record = input.next(inventoryEntries(inventory));
  if (!sameInventory(record, input.stored)) {
    outcome.writes++;
    try {
      const uid = await writeInventory(cluster, input.inventoryNamespace, input.instance, record);
      if (uid) outcome.uid = uid;
    } catch (error) {
      outcome.transient ||= isTransientError(error);
      outcome.errors.push(`inventory: ${(error as Error).message}`);
    }
  }
  return outcome;
}
