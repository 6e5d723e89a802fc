/**
 * `ferry serve` outside Kubernetes and without `--kubeconfig` runs as the single-member fleet and
 * never loads @kubernetes/client-node (about 60 MB of the process's RSS at start): what `serve`
 * loads before it knows it needs Leases (the server, its options, the membership types) reaches
 * the Kubernetes client through no static import. `lease-membership.ts` does, which keeps this
 * test able to fail.
 */
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "..", "..", "src");

/** Static value imports and re-exports of a file (type-only ones are erased; dynamic ones load later). */
function staticImports(file: string): string[] {
  const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
  return [
    ...text.matchAll(
      /(?:^|\n)\s*(import|export)\s+(?!type\s)[^;]*?from\s+["']([^"']+)["']|(?:^|\n)\s*import\s+["']([^"']+)["']/g,
    ),
  ].map((match) => (match[2] ?? match[3])!);
}

/** Every package a module loads at start, through its static imports. */
function packagesLoadedBy(root: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of staticImports(file)) {
      if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier).replace(/\.js$/, ".ts"));
      else if (!specifier.startsWith("node:"))
        packages.add(
          specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!,
        );
    }
  };
  visit(root);
  return packages;
}

describe("ferry serve outside Kubernetes", () => {
  it("loads no Kubernetes client before it knows it needs Leases", () => {
    for (const root of [
      "server/ferry-server.ts",
      "server/server-options.ts",
      "adapters/kubernetes/membership.ts",
    ])
      expect([...packagesLoadedBy(join(SRC, root))], root).not.toContain("@kubernetes/client-node");
    expect([...packagesLoadedBy(join(SRC, "adapters/kubernetes/lease-membership.ts"))]).toContain(
      "@kubernetes/client-node",
    );
  });

  it("takes the Lease membership only behind needsLeases", () => {
    const serve = readFileSync(join(SRC, "cli", "serve.ts"), "utf8");
    expect(serve).not.toMatch(/^import[^;]*lease-membership/m);
    expect(serve).toMatch(
      /needsLeases\(setting\)\s*\?\s*\(await import\("\.\.\/adapters\/kubernetes\/lease-membership\.js"\)\)/,
    );
  });
});
