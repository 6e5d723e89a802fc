/**
 * The inventory's stored format, one versioned schema (docs/architecture.md "The inventory"):
 * the members Ferry applied, the revision it last applied, the set a cycle is about to apply
 * (written before it applies), the prune grace period, and the dry-run memory with the identity of
 * the API server it was gathered on. Version 2 is gzipped JSON in the ConfigMap's `binaryData`;
 * version 1 (a `data.entries` list of members) is still read, so an upgrade keeps its inventory.
 */
import { gunzipSync, gzipSync } from "node:zlib";
import * as z from "zod";
import { UserError } from "../core/errors.js";

export const INVENTORY_FORMAT_KEY = "format";
export const INVENTORY_FORMAT_V2 = "ferry.dev/inventory-v2";
export const INVENTORY_PAYLOAD_KEY = "inventory.json.gz";
/** Version 1's key: one member per line. */
export const INVENTORY_V1_KEY = "entries";
/** A ConfigMap may hold 1 MiB in all; the rest of the object needs far less than this margin. */
export const INVENTORY_MAX_BYTES = 1024 * 1024 - 16 * 1024;

const entry = z.string().min(1).max(1024);

export const inventorySchema = z
  .object({
    version: z.literal(2),
    /** `<group>_<kind>_<namespace>_<name>|<version>` per object Ferry manages. */
    members: z.array(entry),
    /** The config commit the last complete cycle applied. */
    appliedRevision: z.string().min(1).max(128).optional(),
    /** Written before a cycle applies: what it is about to apply (already among the members). */
    intent: z
      .object({
        revision: z.string().min(1).max(128),
        state: z.literal("applying"),
        planned: z.array(entry),
      })
      .strict()
      .optional(),
    /** Pruning held because the head did not contain `appliedRevision`. */
    grace: z
      .object({ head: z.string().min(1).max(128), cyclesLeft: z.number().int().min(0) })
      .strict()
      .optional(),
    /** Which API server the dry-run memory was gathered on (its version and kube-system's uid). */
    server: z.string().min(1).max(512).optional(),
    /** Dry-run memory: inventory key → [live version, hash of the desired object] it was in sync at. */
    inSync: z.record(z.string().min(1).max(1024), z.tuple([z.string().max(256), z.string().max(128)])),
  })
  .strict();

export type InventoryRecord = z.infer<typeof inventorySchema>;

export function emptyInventory(): InventoryRecord {
  return { version: 2, members: [], inSync: {} };
}

function corrupt(where: string, why: string): UserError {
  return new UserError(
    "inventory-corrupt",
    `${where}: ${why}; refusing to reconcile until it is repaired or deleted (see docs/reliability.md)`,
  );
}

/** Reads either version from a ConfigMap's `data` and `binaryData`; throws `inventory-corrupt` on anything else. */
export function decodeInventory(
  where: string,
  data: Record<string, unknown> | undefined,
  binaryData: Record<string, unknown> | undefined,
): InventoryRecord {
  const format = data?.[INVENTORY_FORMAT_KEY];
  if (format === undefined) {
    const text = data?.[INVENTORY_V1_KEY];
    // A ConfigMap without the entries would read as "nothing applied": refuse rather than guess.
    if (typeof text !== "string") throw corrupt(where, `no "${INVENTORY_V1_KEY}" key`);
    const members = text.split("\n").filter((line) => line.trim() !== "");
    return { version: 2, members, inSync: {} };
  }
  if (format !== INVENTORY_FORMAT_V2)
    throw corrupt(where, `unknown format ${JSON.stringify(format)} (written by a newer Ferry?)`);
  const payload = binaryData?.[INVENTORY_PAYLOAD_KEY];
  if (typeof payload !== "string") throw corrupt(where, `no "${INVENTORY_PAYLOAD_KEY}" key`);
  let json: unknown;
  try {
    json = JSON.parse(
      gunzipSync(Buffer.from(payload, "base64"), { maxOutputLength: 64 * 1024 ** 2 }).toString("utf8"),
    );
  } catch (error) {
    throw corrupt(where, `unreadable payload (${(error as Error).message})`);
  }
  const parsed = inventorySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw corrupt(where, `invalid payload at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "?"}`);
  }
  return parsed.data;
}

/** The ConfigMap fields for a record (always version 2); throws when it would not fit in one ConfigMap. */
export function encodeInventory(record: InventoryRecord): {
  data: Record<string, string>;
  binaryData: Record<string, string>;
} {
  const payload = gzipSync(canonicalJson(record), { level: 9 }).toString("base64");
  if (payload.length > INVENTORY_MAX_BYTES) {
    throw new UserError(
      "inventory-too-large",
      `the inventory of ${record.members.length} objects needs ${payload.length} bytes, more than a ConfigMap holds; split the config into several paths`,
    );
  }
  return {
    data: { [INVENTORY_FORMAT_KEY]: INVENTORY_FORMAT_V2 },
    binaryData: { [INVENTORY_PAYLOAD_KEY]: payload },
  };
}

/** Members and memory sorted, keys in schema order: equal records give equal text. */
function canonicalJson(record: InventoryRecord): string {
  const sortedKeys = (map: Record<string, [string, string]>) =>
    Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return JSON.stringify({
    version: 2,
    members: [...new Set(record.members)].sort(),
    ...(record.appliedRevision !== undefined ? { appliedRevision: record.appliedRevision } : {}),
    ...(record.intent ? { intent: { ...record.intent, planned: [...record.intent.planned].sort() } } : {}),
    ...(record.grace ? { grace: { head: record.grace.head, cyclesLeft: record.grace.cyclesLeft } } : {}),
    ...(record.server !== undefined ? { server: record.server } : {}),
    inSync: sortedKeys(record.inSync),
  });
}

/** Whether two records store the same thing (a write would change nothing). */
export function sameInventory(a: InventoryRecord, b: InventoryRecord): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
