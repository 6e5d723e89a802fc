/**
 * `ferry serve` outside Kubernetes and without `--kubeconfig` runs as the single-member fleet and
 * never loads @kubernetes/client-node (about 60 MB of the process's RSS at start): what `serve`
 * loads before it knows it needs Leases (the server, its options, the membership types) reaches
 * the Kubernetes client through no static import. `lease-membership.ts` does, which keeps this
 * test able to fail.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packagesLoadedBy } from "../support/static-imports.js";

const SRC = join(import.meta.dirname, "..", "..", "src");

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
