import { describe, expect, it } from "vitest";
import { closingRecord } from "../../src/reconciler/cycle-bookkeeping.js";
import { DiffMemory } from "../../src/reconciler/diff-memory.js";
import type { InventoryRecord } from "../../src/reconciler/inventory-schema.js";
import type { KubeObject } from "../../src/reconciler/types.js";

const configMap = (name: string, resourceVersion: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "shop", resourceVersion },
  data: { key: name },
});

function memoryAt(count: number, version: (index: number) => string): DiffMemory {
  const memory = new DiffMemory();
  for (let index = 0; index < count; index++) {
    const object = configMap(`cm-${index}`, version(index));
    memory.remember(
      `_ConfigMap_shop_cm-${index}`,
      { ...object, metadata: { ...object.metadata, resourceVersion: undefined } },
      object,
    );
  }
  return memory;
}

describe("the record that closes a cycle", () => {
  const server = "v1.34.4/uid-1";
  const stored: InventoryRecord = {
    version: 2,
    members: ["_ConfigMap_shop_cm-0|v1"],
    appliedRevision: "a".repeat(40),
    server,
    inSync: memoryAt(100, (index) => `${index}`).export(),
  };
  const close = (memory: DiffMemory, overrides: Partial<Parameters<typeof closingRecord>[0]> = {}) =>
    closingRecord({
      stored,
      lastWritten: stored,
      members: stored.members,
      appliedAll: true,
      verdict: { holdPrune: false, nextRecorded: "a".repeat(40) },
      server,
      memory,
      ...overrides,
    });

  it("keeps the stored memory when only a few entries moved (no write for another manager's edit)", () => {
    const record = close(memoryAt(100, (index) => (index < 3 ? `${index}-edited` : `${index}`)));
    expect(record).toEqual(stored);
  });

  it("stores the fresh memory once more than 10 entries are out of date", () => {
    const memory = memoryAt(100, (index) => (index < 11 ? `${index}-edited` : `${index}`));
    expect(close(memory).inSync).toEqual(memory.export());
  });

  it("stores the fresh memory with any write made for another reason, and for another server", () => {
    const memory = memoryAt(100, (index) => (index < 3 ? `${index}-edited` : `${index}`));
    expect(close(memory, { members: [...stored.members, "_ConfigMap_shop_new|v1"] }).inSync).toEqual(
      memory.export(),
    );
    expect(close(memory, { server: "v1.34.4/uid-2" })).toMatchObject({
      server: "v1.34.4/uid-2",
      inSync: memory.export(),
    });
    expect(close(memory, { server: undefined }).inSync).toEqual({});
  });
});
