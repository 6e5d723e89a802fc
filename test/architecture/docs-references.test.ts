/**
 * Keeps the design in docs/ and the code pointing at each other: every docs/ file and catalogue row
 * the code cites exists, and every row of docs/reliability.md names test files that exist.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "fixtures") return [];
    return statSync(path).isDirectory() ? tsFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const code = [
  ...tsFiles(join(ROOT, "src")),
  ...tsFiles(join(ROOT, "test")),
  ...tsFiles(join(ROOT, "packages", "sandbox", "src")),
].map((path) => ({
  path: relative(ROOT, path),
  text: readFileSync(path, "utf8"),
}));
const docs = [
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
  "README.md",
  "packages/sandbox/README.md",
].map((path) => ({ path, text: readFileSync(join(ROOT, path), "utf8") }));
const catalogue = readFileSync(join(ROOT, "docs", "reliability.md"), "utf8");

/** `| 15 | input | behaviour | covered by |` → row 15 and its last cell. */
const rows = new Map(
  [...catalogue.matchAll(/^\| (\d+) \|.*\| ([^|]*) \|$/gm)].map((m) => [Number(m[1]), m[2]!.trim()]),
);

describe("docs references", () => {
  it("finds the catalogue's rows", () => {
    expect(rows.size).toBeGreaterThanOrEqual(44);
  });

  it("cites only docs/ files that exist", () => {
    const missing = code.flatMap(({ path, text }) =>
      [...text.matchAll(/\bdocs\/([a-z-]+\.md)/g)]
        .filter((m) => !existsSync(join(ROOT, "docs", m[1]!)))
        .map((m) => `${path}: docs/${m[1]}`),
    );
    expect(missing).toEqual([]);
  });

  it("cites only reliability rows that exist", () => {
    const missing: string[] = [];
    let cited = 0;
    for (const { path, text } of code)
      for (const m of text.matchAll(/docs\/reliability\.md,? rows? ((?:\d+(?:[–-]\d+)?(?:,? (?:and )?)?)+)/g))
        for (const n of m[1]!.match(/\d+/g)!) {
          cited++;
          if (!rows.has(Number(n))) missing.push(`${path}: row ${n}`);
        }
    expect(missing).toEqual([]);
    expect(cited).toBeGreaterThan(20);
  });

  it("names, for every catalogue row, test files that exist", () => {
    const problems: string[] = [];
    for (const [row, cell] of rows) {
      const named = [...cell.matchAll(/`([^`]+\.ts)`/g)].map((m) => m[1]!);
      if (named.length === 0) problems.push(`row ${row}: no test named`);
      for (const file of named)
        if (!existsSync(join(ROOT, "test", file))) problems.push(`row ${row}: ${file}`);
    }
    expect(problems).toEqual([]);
  });

  it("names only src/, test/ and packages/ paths that exist", () => {
    const missing = docs.flatMap(({ path, text }) =>
      [...text.matchAll(/`((?:src|test|packages)\/[\w./-]+)`/g)]
        .filter((m) => !existsSync(join(ROOT, m[1]!.replace(/\/$/, ""))))
        .map((m) => `${path}: ${m[1]}`),
    );
    expect(missing).toEqual([]);
  });

  it("traces a registry hint and a GitHub push file by file in docs/architecture.md", () => {
    const architecture = docs.find(({ path }) => path === "docs/architecture.md")!.text;
    const section = /### Two hints traced, file by file\n([\s\S]*?)\n## /.exec(architecture)?.[1];
    expect(section, "the trace section").toBeDefined();
    const [registry, push] = section!.split("A GitHub `push`");
    const files = (text: string | undefined) =>
      [...(text ?? "").matchAll(/`(src\/[\w./-]+\.ts)`/g)].map((m) => m[1]!);
    // Each walk names the files from the route to the PR, and every one of them exists.
    expect(files(registry)).toEqual(
      expect.arrayContaining(["src/server/registry-receiver.ts", "src/app/sync-repository.ts"]),
    );
    expect(files(push)).toEqual(
      expect.arrayContaining(["src/server/github-webhook-route.ts", "src/app/upsert-promotion-pr.ts"]),
    );
    const missing = [...files(registry), ...files(push)].filter((file) => !existsSync(join(ROOT, file)));
    expect(missing).toEqual([]);
  });
});
