import { existsSync, statSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LONG_RUNNING_FILES, withLongRunningFirst } from "./slowest-files-first.js";

describe("the order npm test starts its files in", () => {
  it("puts the long-running files first, in their listed order, and keeps every other file's order", () => {
    const files = ["big.test.ts", "b.test.ts", "slow-2.test.ts", "a.test.ts", "slow-1.test.ts"];
    expect(withLongRunningFirst(files, (f) => f, ["slow-1.test.ts", "slow-2.test.ts"])).toEqual([
      "slow-1.test.ts",
      "slow-2.test.ts",
      "big.test.ts",
      "b.test.ts",
      "a.test.ts",
    ]);
  });

  it("lists only test files that exist and that size alone would start late", () => {
    expect(LONG_RUNNING_FILES.length).toBeGreaterThan(0);
    for (const file of LONG_RUNNING_FILES) {
      expect(existsSync(file), file).toBe(true);
      expect(file).toMatch(/\.test\.ts$/);
      // Vitest's clean-clone rule (largest first) would already start a file this large early.
      expect(statSync(file).size, file).toBeLessThan(8_000);
    }
  });
});
