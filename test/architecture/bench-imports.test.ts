/**
 * `npm run bench` runs outside vitest, so nothing it imports, directly or through a test world, may import
 * `vitest` (it throws "Vitest failed to access its internal state" at load). docs/testing.md "Bench".
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const ENTRY = join(ROOT, "test", "bench", "run.ts");

function specifiersOf(text: string): string[] {
  return [
    ...text.matchAll(
      /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*import\s+["']([^"']+)["']/g,
    ),
  ].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

/** The .ts file a relative specifier names (sources import `./x.js` for `./x.ts`). */
function resolveRelative(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, ".ts"), base, `${base}.ts`, join(base, "index.ts")])
    if (candidate.endsWith(".ts") && existsSync(candidate)) return candidate;
  return undefined;
}

/** Every path from the bench's entry to a file that imports vitest, as "a → b → c". */
function vitestChains(): string[] {
  const seen = new Set<string>();
  const chains: string[] = [];
  const visit = (file: string, path: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    const here = [...path, relative(ROOT, file)];
    for (const spec of specifiersOf(readFileSync(file, "utf8"))) {
      if (spec === "vitest" || spec.startsWith("vitest/")) chains.push(here.join(" → "));
      else if (spec.startsWith(".")) {
        const next = resolveRelative(file, spec);
        if (next) visit(next, here);
      }
    }
  };
  visit(ENTRY, []);
  return chains;
}

describe("the bench's imports", () => {
  it("reach the bench groups and the test worlds they start", () => {
    const seen: string[] = [];
    const walk = (file: string) => {
      if (seen.includes(file)) return;
      seen.push(file);
      for (const spec of specifiersOf(readFileSync(file, "utf8")))
        if (spec.startsWith(".")) {
          const next = resolveRelative(file, spec);
          if (next) walk(next);
        }
    };
    walk(ENTRY);
    const names = seen.map((file) => relative(ROOT, file));
    expect(names).toContain(join("test", "bench", "app.ts"));
    expect(names).toContain(join("test", "support", "app-e2e-world.ts"));
  });

  it("never import vitest", () => {
    expect(vitestChains()).toEqual([]);
  });
});
