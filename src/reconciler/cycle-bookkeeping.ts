/**
 * The inventory records a cycle writes (docs/architecture.md "The inventory"): the intent written
 * before anything is applied, so objects created by a cycle that dies halfway are still members
 * (and so pruned or reported later), and the record that closes the cycle.
 */
import type { CycleSettings } from "./cycle-settings.js";
import type { DiffMemory } from "./diff-memory.js";
import { writeInventory, type StoredInventory } from "./inventory.js";
import { sameInventory, type InventoryRecord } from "./inventory-schema.js";
import { formatInventoryEntry, inventoryKey } from "./object-ref.js";
import type { SyncPlan } from "./plan.js";
import type { RevisionGuardVerdict } from "./revision-guard.js";
import type { ClusterPort } from "./ports.js";
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

/**
 * Writes the intent when the plan applies new members. When the plan creates the inventory's own
 * namespace, that Namespace is applied first (the inventory cannot exist before it): the one
 * object a crash at that moment could leave unrecorded. Throws when a write fails (nothing else
 * has been applied then).
 */
export async function recordIntent(
  cluster: ClusterPort,
  settings: CycleSettings,
  stored: StoredInventory,
  members: ObjectRef[],
  plan: SyncPlan,
  revision: string,
): Promise<{ members: ObjectRef[]; lastWritten: InventoryRecord; uid?: string; writes: number }> {
  const intent = intentRecord(stored.record, members, plan, revision);
  const base = { members, lastWritten: stored.record, ...(stored.uid ? { uid: stored.uid } : {}) };
  if (!intent) return { ...base, writes: 0 };
  let writes = 0;
  const home = plan.apply.find(
    (item) =>
      item.action === "create" &&
      item.ref.group === "" &&
      item.ref.kind === "Namespace" &&
      item.ref.name === settings.inventoryNamespace,
  );
  if (home) {
    writes++;
    await cluster.apply(home.object, { dryRun: false });
  }
  writes++;
  const uid = await writeInventory(cluster, settings.inventoryNamespace, settings.instance, intent.record);
  const known = uid ?? stored.uid;
  return { members: intent.members, lastWritten: intent.record, ...(known ? { uid: known } : {}), writes };
}

/**
 * The record that closes a cycle, given its members. A change of the dry-run memory alone (another
 * manager touched a few objects) is not worth a write: it is stored with the next write for
 * another reason, or once more than `MEMORY_SLACK` entries (or 5 %) are out of date, so a restart
 * never repeats more than that many dry-runs.
 */
export function closingRecord(input: {
  stored: InventoryRecord;
  /** The record as last written this cycle (the intent, or the stored one). */
  lastWritten: InventoryRecord;
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
  const fresh: InventoryRecord = {
    version: 2,
    members: input.members,
    ...(appliedRevision !== undefined ? { appliedRevision } : {}),
    ...(verdict.grace ? { grace: verdict.grace } : {}),
    ...(server !== undefined ? { server } : {}),
    inSync: server !== undefined ? input.memory.export() : {},
  };
  if (server === undefined || stored.server !== server) return fresh;
  const kept = { ...fresh, inSync: stored.inSync };
  const outdated = outdatedEntries(stored.inSync, fresh.inSync);
  const slack = Math.max(MEMORY_SLACK, Math.floor(Object.keys(fresh.inSync).length / 20));
  return outdated <= slack && sameInventory(kept, input.lastWritten) ? kept : fresh;
}

/** Memory-only changes up to this many entries wait for the next write. */
export const MEMORY_SLACK = 10;

function outdatedEntries(
  stored: Record<string, [string, string]>,
  fresh: Record<string, [string, string]>,
): number {
  let count = 0;
  for (const [key, [version, fingerprint]] of Object.entries(fresh)) {
    const old = stored[key];
    if (!old || old[0] !== version || old[1] !== fingerprint) count++;
  }
  for (const key of Object.keys(stored)) if (!(key in fresh)) count++;
  return count;
}
