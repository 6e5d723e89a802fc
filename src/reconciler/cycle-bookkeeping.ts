/**
 * The inventory records a cycle writes (docs/architecture.md "The inventory"): the intent written
 * before anything is applied, so objects created by a cycle that dies halfway are still members
 * (and so pruned or reported later), and the record that closes the cycle.
 */
import type { DiffMemory } from "./diff-memory.js";
import type { InventoryRecord } from "./inventory-schema.js";
import { formatInventoryEntry, inventoryKey } from "./object-ref.js";
import type { SyncPlan } from "./plan.js";
import type { RevisionGuardVerdict } from "./revision-guard.js";
import type { ObjectRef } from "./types.js";

/**
 * The record to write before applying, or undefined when every object the plan applies is already
 * a member (an update of a member needs no intent: a crash leaves it managed).
 */
export function intentRecord(
  stored: InventoryRecord,
  members: ObjectRef[],
  plan: SyncPlan,
  revision: string,
): { record: InventoryRecord; members: ObjectRef[] } | undefined {
  const known = new Set(members.map(inventoryKey));
  const planned = plan.apply.map((item) => item.ref).filter((ref) => !known.has(inventoryKey(ref)));
  if (planned.length === 0) return undefined;
  const next = [...members, ...planned];
  return {
    members: next,
    record: {
      ...stored,
      members: [...new Set([...stored.members, ...planned.map(formatInventoryEntry)])],
      intent: { revision, state: "applying", planned: planned.map(formatInventoryEntry) },
    },
  };
}

/** The record that closes a cycle, given its members. */
export function closingRecord(input: {
  stored: InventoryRecord;
  members: string[];
  /** Whether every object of the revision was applied (or was already in sync). */
  appliedAll: boolean;
  verdict: RevisionGuardVerdict;
  /** `<server version>/<inventory uid>`; undefined: the dry-run memory is not stored. */
  server: string | undefined;
  memory: DiffMemory;
}): InventoryRecord {
  const { stored, verdict, server } = input;
  const appliedRevision = input.appliedAll ? verdict.nextRecorded : stored.appliedRevision;
  return {
    version: 2,
    members: input.members,
    ...(appliedRevision !== undefined ? { appliedRevision } : {}),
    ...(verdict.grace ? { grace: verdict.grace } : {}),
    ...(server !== undefined ? { server } : {}),
    inSync: server !== undefined ? input.memory.export() : {},
  };
}
