import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { inventoryObject } from "../../src/reconciler/inventory.js";
import {
  decodeInventory,
  encodeInventory,
  INVENTORY_PAYLOAD_KEY,
  type InventoryRecord,
} from "../../src/reconciler/inventory-schema.js";
import { guardRevision } from "../../src/reconciler/revision-guard.js";

const sha = (n: number) => n.toString(16).padStart(40, "0");

/** 5,000 members with long, little-repeating names, each with a dry-run memory entry. */
function largeRecord(count: number): InventoryRecord {
  const members: string[] = [];
  const inSync: InventoryRecord["inSync"] = {};
  for (let index = 0; index < count; index++) {
    const namespace = `team-${index % 40}-${randomBytes(8).toString("hex")}`;
    const name = `service-${index}-${randomBytes(12).toString("hex")}`;
    const key = index % 5 === 0 ? `apps_Deployment_${namespace}_${name}` : `_ConfigMap_${namespace}_${name}`;
    members.push(`${key}|v1`);
    inSync[key] = [
      index % 5 === 0 ? `g${index}/${randomBytes(12).toString("hex")}` : `rv${1_000_000 + index}`,
      randomBytes(12).toString("hex"),
    ];
  }
  return {
    version: 2,
    members,
    appliedRevision: sha(1),
    grace: { head: sha(2), cyclesLeft: 3 },
    server: "v1.34.4/2f1c6a4e-0000-4000-8000-000000000000",
    inSync,
  };
}

describe("the inventory's stored format", () => {
  it("keeps 5,000 objects with their dry-run memory within one ConfigMap's 1 MiB, and reads them back", () => {
    const record = largeRecord(5000);
    const object = inventoryObject("ferry", "production", record);
    const size = Buffer.byteLength(JSON.stringify(object));
    expect(size).toBeLessThan(1024 * 1024);
    const back = decodeInventory(
      "test",
      object.data as Record<string, unknown>,
      object.binaryData as Record<string, unknown>,
    );
    expect(back.members).toEqual([...record.members].sort());
    expect(back.inSync).toEqual(record.inSync);
    expect(back.grace).toEqual(record.grace);
  });

  it("encodes the same record to the same bytes (a no-op cycle writes nothing)", () => {
    const record = largeRecord(10);
    const shuffled = { ...record, members: [...record.members].reverse() };
    expect(encodeInventory(shuffled)).toEqual(encodeInventory(record));
  });

  it("reads the older format (one member per line) with no memory", () => {
    const record = decodeInventory(
      "test",
      { entries: "_ConfigMap_shop_a|v1\n\napps_Deployment_shop_web|v1\n" },
      undefined,
    );
    expect(record).toEqual({
      version: 2,
      members: ["_ConfigMap_shop_a|v1", "apps_Deployment_shop_web|v1"],
      inSync: {},
    });
  });

  it.each([
    { what: "no key at all", data: {}, binaryData: undefined, error: /no "entries" key/ },
    {
      what: "an unknown format",
      data: { format: "ferry.dev/inventory-v3" },
      binaryData: {},
      error: /unknown format/,
    },
    {
      what: "no payload",
      data: { format: "ferry.dev/inventory-v2" },
      binaryData: {},
      error: /no "inventory.json.gz"/,
    },
    {
      what: "a payload that is not gzip",
      data: { format: "ferry.dev/inventory-v2" },
      binaryData: { [INVENTORY_PAYLOAD_KEY]: Buffer.from("plain").toString("base64") },
      error: /unreadable payload/,
    },
    {
      what: "a payload that breaks the schema",
      data: { format: "ferry.dev/inventory-v2" },
      binaryData: encodeInventory({ version: 2, members: [], inSync: {} }).binaryData,
      tamper: true,
      error: /invalid payload at members/,
    },
  ])("refuses $what as corrupt", ({ data, binaryData, tamper, error }) => {
    let stored = binaryData;
    if (tamper) {
      const bad = { version: 2, members: "not a list", inSync: {} };
      stored = {
        [INVENTORY_PAYLOAD_KEY]: gzipSync(JSON.stringify(bad)).toString("base64"),
      };
    }
    expect(() => decodeInventory("ConfigMap shop/ferry-inventory-x", data, stored)).toThrow(error);
  });
});

describe("the prune guard on the applied revision", () => {
  const base = { recorded: sha(1), head: sha(2), contained: false, grace: undefined, graceCycles: 3 };

  it("prunes when the head contains the applied revision, or there is none yet", () => {
    expect(guardRevision({ ...base, contained: true })).toEqual({ holdPrune: false, nextRecorded: sha(2) });
    expect(guardRevision({ ...base, recorded: undefined })).toEqual({
      holdPrune: false,
      nextRecorded: sha(2),
    });
    expect(guardRevision({ ...base, graceCycles: 0 }).holdPrune).toBe(false);
  });

  it("holds the prune for the grace period while the head stays the same, keeping the newer revision on record, then follows it", () => {
    const verdicts = [];
    let grace: { head: string; cyclesLeft: number } | undefined;
    for (let cycle = 0; cycle < 4; cycle++) {
      const verdict = guardRevision({ ...base, grace });
      verdicts.push([verdict.holdPrune, verdict.nextRecorded === sha(1)]);
      grace = verdict.grace;
    }
    expect(verdicts).toEqual([
      [true, true],
      [true, true],
      [true, true],
      [false, false],
    ]);
  });

  it("starts the grace period again when the head moves to another revision without the applied one", () => {
    const verdict = guardRevision({ ...base, head: sha(3), grace: { head: sha(2), cyclesLeft: 1 } });
    expect(verdict).toMatchObject({ holdPrune: true, grace: { head: sha(3), cyclesLeft: 3 } });
    expect(verdict.reason).toMatch(/does not contain the applied revision/);
  });
});
