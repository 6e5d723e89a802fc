/**
 * Ferry's inventory: the objects it applied, stored in the cluster as the ConfigMap
 * `ferry-inventory-<instance>` (like Flux's `.status.inventory`), so a restarted reconciler
 * prunes only what it applied itself and never anything else. Its format is
 * `inventory-schema.ts`; a member entry that does not parse is left out of the refs (a
 * hand-edited entry must not crash a prune) but never written back.
 */
import {
  decodeInventory,
  emptyInventory,
  encodeInventory,
  type InventoryRecord,
} from "./inventory-schema.js";
import { compareRefs, formatInventoryEntry, parseInventoryEntry } from "./object-ref.js";
import type { ClusterPort } from "./ports.js";
import { FIELD_MANAGER, MANAGED_BY_LABEL } from "./desired-state.js";
import type { KubeObject, ObjectRef } from "./types.js";

export function inventoryName(instance: string): string {
  return `ferry-inventory-${instance}`;
}

export interface StoredInventory {
  /** The members as object references. */
  refs: ObjectRef[];
  /** The whole record as read (an empty one when there was no ConfigMap). */
  record: InventoryRecord;
  /** The ConfigMap's uid: it exists on one cluster only, so it names the cluster with the server's version. */
  uid?: string;
}

export function inventoryEntries(refs: ObjectRef[]): string[] {
  return [...refs].sort(compareRefs).map(formatInventoryEntry);
}

export function refsOfEntries(entries: string[]): ObjectRef[] {
  return entries.map(parseInventoryEntry).filter((ref): ref is ObjectRef => ref !== undefined);
}

export async function readInventory(
  cluster: ClusterPort,
  namespace: string,
  instance: string,
): Promise<StoredInventory> {
  const stored = await cluster.get({
    group: "",
    version: "v1",
    kind: "ConfigMap",
    namespace,
    name: inventoryName(instance),
  });
  if (!stored) return { refs: [], record: emptyInventory() };
  const record = decodeInventory(
    `ConfigMap ${namespace}/${inventoryName(instance)}`,
    stored.data as Record<string, unknown> | undefined,
    stored.binaryData as Record<string, unknown> | undefined,
  );
  const uid = typeof stored.metadata.uid === "string" ? stored.metadata.uid : undefined;
  return { refs: refsOfEntries(record.members), record, ...(uid ? { uid } : {}) };
}

export function inventoryObject(namespace: string, instance: string, record: InventoryRecord): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: inventoryName(instance),
      namespace,
      labels: { [MANAGED_BY_LABEL]: FIELD_MANAGER, "ferry.dev/inventory-of": instance },
    },
    ...encodeInventory(record),
  };
}

/** Writes the record (server-side apply) and returns the ConfigMap's uid. */
export async function writeInventory(
  cluster: ClusterPort,
  namespace: string,
  instance: string,
  record: InventoryRecord,
): Promise<string | undefined> {
  const written = await cluster.apply(inventoryObject(namespace, instance, record), { dryRun: false });
  return typeof written.metadata.uid === "string" ? written.metadata.uid : undefined;
}
