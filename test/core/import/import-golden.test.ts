import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { configContextFromEnv } from "../../../src/core/config/config-context.js";
import { loadConfig } from "../../../src/core/config/load-config.js";
import { importPeerConfig, renderImport, type InputFile } from "../../../src/core/import/import-config.js";

/**
 * Golden imports (docs/testing.md "Golden files"): test/fixtures/import/<case>/input/ (the peer's
 * objects, each modelled on a documented example its first comment names) → expected.ferry.yml,
 * which Ferry's own config loader must accept.
 */
const FIXTURES = fileURLToPath(new URL("../../fixtures/import/", import.meta.url));

const cases = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

function inputFiles(dir: string): InputFile[] {
  const walk = (path: string): string[] =>
    readdirSync(path, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? walk(join(path, entry.name)) : [join(path, entry.name)],
    );
  return walk(dir)
    .sort()
    .map((path) => ({ file: relative(dir, path), text: readFileSync(path, "utf8") }));
}

/** The context of an operator who exposed and bound each variable the import names to its host. */
function operatorContext(config: string) {
  const env: Record<string, string> = {};
  for (const m of config.matchAll(/^ {2}(\S+):\n(?: {4}.*\n)*? {4}passwordEnv: (\S+)$/gm)) {
    env[m[2]!] = "secret";
    env[`${m[2]!}_HOSTS`] = m[1]!;
  }
  // The cloud identity or Docker config.json it names, bound to its host as the import note says.
  for (const m of config.matchAll(/^# ferry import: .* (FERRY_\w+_HOSTS)=(\S+)$/gm)) env[m[1]!] = m[2]!;
  return configContextFromEnv(env);
}

describe("golden imports", () => {
  it("has a case for each form of both peers", () => {
    expect(cases.filter((name) => name.startsWith("argocd-")).length).toBeGreaterThanOrEqual(4);
    expect(cases.filter((name) => name.startsWith("flux-")).length).toBeGreaterThanOrEqual(3);
  });

  describe.each(cases)("%s", (name) => {
    const expected = readFileSync(join(FIXTURES, name, "expected.ferry.yml"), "utf8");

    it("prints the expected ferry.yml", () => {
      expect(renderImport(importPeerConfig(inputFiles(join(FIXTURES, name, "input"))))).toBe(expected);
    });

    it("prints a config Ferry's loader accepts", () => {
      const loaded = loadConfig(expected, operatorContext(expected));
      expect(loaded.ok ? [] : loaded.problems).toEqual([]);
    });

    it("says each thing it could not carry over on a # ferry import: line before the config", () => {
      const lines = expected.split("\n");
      const firstKey = lines.findIndex((line) => /^[a-z]/.test(line));
      expect(lines.slice(0, firstKey).every((line) => line.startsWith("# ferry import: "))).toBe(true);
      expect(lines.slice(firstKey).some((line) => line.includes("ferry import"))).toBe(false);
    });
  });
});
