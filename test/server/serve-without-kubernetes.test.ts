/**
 * `ferry serve` outside Kubernetes and without `--kubeconfig` runs as the single-member fleet and
 * loads no Lease code; in Kubernetes its Leases go through Ferry's own adapter
 * (`cluster-access.ts`, `kube-transport.ts`), never @kubernetes/client-node, whose import alone is
 * about 60 MB of the process's RSS: no path from serve's modules reaches it through a static import.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packagesLoadedBy } from "../support/static-imports.js";

const SRC = join(import.meta.dirname, "..", "..", "src");

describe("ferry serve outside Kubernetes", () => {
  it("loads no Kubernetes client library, outside Kubernetes or in it", () => {
    for (const root of [
      "server/ferry-server.ts",
      "server/server-options.ts",
      "adapters/kubernetes/membership.ts",
      "adapters/kubernetes/lease-membership.ts",
    ])
      expect([...packagesLoadedBy(join(SRC, root))], root).not.toContain("@kubernetes/client-node");
    // The scan follows the Lease code's imports into the packages it does load.
    expect([...packagesLoadedBy(join(SRC, "adapters/kubernetes/lease-membership.ts"))]).toContain("yaml");
  });

  it("takes the Lease membership only behind needsLeases", () => {
    const serve = readFileSync(join(SRC, "cli", "serve.ts"), "utf8");
    expect(serve).not.toMatch(/^import[^;]*lease-membership/m);
    expect(serve).toMatch(
      /needsLeases\(setting\)\s*\?\s*\(await import\("\.\.\/adapters\/kubernetes\/lease-membership\.js"\)\)/,
    );
  });
});
