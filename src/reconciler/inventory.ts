/**
 * Ferry's inventory: the objects it applied, stored in the cluster as the ConfigMap
 * `ferry-inventory-<instance>` (like Flux's `.status.inventory`), so a restarted reconciler
 * prunes only what it applied itself and never anything else.
 */
import { UserError } from "../core/errors.js";
import { compareRefs, formatInventoryEntry, parseInventoryEntry } from "./object-ref.js";
import type { ClusterPort } from "./ports.js";
import { FIELD_MANAGER, MANAGED_BY_LABEL } from "./desired-state.js";
import type { KubeObject, ObjectRef } from "./types.js";

export const INVENTORY_KEY = "entries";

export function inventoryName(instance: string): string {
  return `ferry-inventory-${instance}`;
}

export interface StoredInventory {
  refs: ObjectRef[];
  /** The entries exactly as stored, to skip a write that would change nothing. */
  entries: string[];
}

export function inventoryEntries(refs: ObjectRef[]): string[] {
  return [...refs].sort(compareRefs).map(formatInventoryEntry);
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
  if (!stored) return { refs: [], entries: [] };
  const text = (stored.data as Record<string, unknown> | undefined)?.[INVENTORY_KEY];
  if (typeof text !== "string") {
    // A ConfigMap without the entries would read as "nothing applied" — refuse rather than guess.
    throw new UserError(
      "inventory-corrupt",
      `ConfigMap ${namespace}/${inventoryName(instance)} has no "${INVENTORY_KEY}" key`,
    );
  }
  const entries = text.split("\n").filter((line) => line.trim() !== "");
  const refs = entries.map(parseInventoryEntry).filter((ref): ref is ObjectRef => ref !== undefined);
  return { refs, entries };
}

export function inventoryObject(namespace: string, instance: string, refs: ObjectRef[]): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: inventoryName(instance),
      namespace,
      labels: { [MANAGED_BY_LABEL]: FIELD_MANAGER, "ferry.dev/inventory-of": instance },
    },
    data: { [INVENTORY_KEY]: inventoryEntries(refs).join("\n") + "\n" },
  };
}
