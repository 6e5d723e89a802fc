/**
 * A per-test timeout is a backstop for a hang, never the clock a test fails by: no unit-tier test
 * file sets one below the suite's own (a wait for an effect keeps its own deadline and says what it
 * waited for). docs/testing.md "Timeouts".
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import config from "../../vitest.config.js";

const ROOT = join(import.meta.dirname, "..", "..");

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === "fixtures" || path === join(ROOT, "test", "cluster") ? [] : testFiles(path);
    return entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** The places a test file sets a test's or a hook's timeout: `}, 60_000);`, `{ timeout: 60_000 }`, `vi.setConfig`. */
const SETTINGS = [
  /^\s*\}, ([0-9_]+)\);$/gm,
  /\{ timeout: ([0-9_]+) \}/g,
  /\b(?:testTimeout|hookTimeout): ([0-9_]+)/g,
];

function shortTimeouts(floor: number): string[] {
  const found: string[] = [];
  for (const file of testFiles(join(ROOT, "test"))) {
    if (file === import.meta.filename) continue; // its own examples below
    const text = readFileSync(file, "utf8");
    for (const pattern of SETTINGS)
      for (const match of text.matchAll(pattern)) {
        const ms = Number(match[1]!.replaceAll("_", ""));
        if (ms < floor) {
          const line = text.slice(0, match.index).split("\n").length;
          found.push(`${relative(ROOT, file)}:${line}: ${match[0].trim()}`);
        }
      }
  }
  return found;
}

describe("test timeouts", () => {
  const testTimeout = config.test?.testTimeout ?? 0;
  const hookTimeout = config.test?.hookTimeout ?? 0;

  it("are minutes long for the unit tier, for a machine ten times slower than a loaded one", () => {
    expect(testTimeout).toBeGreaterThanOrEqual(120_000);
    expect(hookTimeout).toBeGreaterThanOrEqual(testTimeout);
  });

  it("are never lowered below the suite's own by a test file", () => {
    expect(shortTimeouts(testTimeout)).toEqual([]);
  });

  it("would be found where a file lowers one", () => {
    // The scan itself must see the three spellings, or the test above proves nothing.
    const text =
      "it('x', () => {\n  }, 30_000);\ndescribe('y', { timeout: 30_000 }, () => {});\nvi.setConfig({ testTimeout: 60_000 });\n";
    const hits = SETTINGS.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1]));
    expect(hits).toEqual(["30_000", "30_000", "60_000"]);
  });
});
