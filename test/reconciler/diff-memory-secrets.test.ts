import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DiffMemory } from "../../src/reconciler/diff-memory.js";
import type { KubeObject } from "../../src/reconciler/types.js";

const SECRET = {
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "db", namespace: "shop" },
  stringData: { password: "hunter2" },
} as unknown as KubeObject;
const CONFIG_MAP = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "c", namespace: "shop" },
  data: { a: "b" },
} as unknown as KubeObject;
const live = (object: KubeObject, resourceVersion: string) =>
  ({ ...object, metadata: { ...object.metadata, resourceVersion } }) as KubeObject;

describe("the dry-run memory and Secrets", () => {
  it("remembers a Secret in this process but never stores it, nor a plain hash a guess could be tested against", () => {
    const memory = new DiffMemory();
    memory.remember("_Secret_shop_db", SECRET, live(SECRET, "7"));
    memory.remember("_ConfigMap_shop_c", CONFIG_MAP, live(CONFIG_MAP, "8"));
    expect(memory.isKnownInSync("_Secret_shop_db", SECRET, live(SECRET, "7"))).toBe(true);
    const stored = memory.export();
    expect(Object.keys(stored)).toEqual(["_ConfigMap_shop_c"]);
    // An unkeyed hash of the Secret (what a ConfigMap's entry is) would let anyone who reads the
    // inventory test guesses of the password: the Secret's fingerprint is not that hash.
    const plain = createHash("sha256").update(JSON.stringify(SECRET)).digest("hex").slice(0, 24);
    expect(DiffMemory.fingerprint(SECRET)).not.toBe(plain);
    expect(DiffMemory.fingerprint(CONFIG_MAP)).toBe(
      createHash("sha256").update(JSON.stringify(CONFIG_MAP)).digest("hex").slice(0, 24),
    );
    expect(JSON.stringify(stored)).not.toContain(DiffMemory.fingerprint(SECRET));
  });

  it("adopts no Secret entry from a stored inventory", () => {
    const memory = new DiffMemory();
    memory.adopt({
      _Secret_shop_db: ["rv7", DiffMemory.fingerprint(SECRET)],
      _ConfigMap_shop_c: ["rv8", "x"],
    });
    expect(memory.wasInSyncWith("_Secret_shop_db", SECRET)).toBe(false);
    expect(Object.keys(memory.export())).toEqual(["_ConfigMap_shop_c"]);
  });
});
