/**
 * A chart whose dependency lives in an OCI registry, end to end through a reconciler cycle: the
 * dependency (packaged by `helm package`, pushed to the embedded registry) is downloaded by
 * Ferry's registry client, rendered with the parent's values, applied to the cluster simulator,
 * and its manifest digest shown in the reconciler's status.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startEmbeddedRegistry } from "../../packages/sandbox/src/registry/embedded-registry.js";
import { pushChart } from "../../packages/sandbox/src/registry/push-chart.js";
import { createRegistryClient } from "../../src/adapters/registry/index.js";
import { startHelmHttpRepo } from "../support/helm-http-repo.js";
import { setupPerTest } from "../support/reconciler-harness.js";

const world = setupPerTest();

function packageChart(name: string, version: string): Buffer {
  const work = world.temp.make("ferry-chart-src-");
  const files: Record<string, string> = {
    "Chart.yaml": `apiVersion: v2\nname: ${name}\nversion: ${version}\n`,
    "values.yaml": "greeting: hello\n",
    "templates/cm.yaml":
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Chart.Name }}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(work, name, file)), { recursive: true });
    writeFileSync(path.join(work, name, file), text);
  }
  execFileSync("helm", ["package", path.join(work, name), "--destination", work], { stdio: "pipe" });
  return readFileSync(path.join(work, `${name}-${version}.tgz`));
}

describe("a chart with an oci:// dependency, through a reconciler cycle", () => {
  it("is downloaded, rendered, applied, and pinned by digest in the status", async () => {
    const registry = await startEmbeddedRegistry();
    try {
      const pushed = await pushChart(registry.url, "charts/greeter", {
        name: "greeter",
        version: "1.2.3",
        archive: packageChart("greeter", "1.2.3"),
      });
      const current = await world.setup();
      current.repo.commit({
        "env/staging/Chart.yaml": `apiVersion: v2\nname: staging\nversion: 0.1.0\ndependencies:\n  - name: greeter\n    version: "~1.2.0"\n    repository: oci://${registry.host}/charts\n`,
        "env/staging/values.yaml": "greeter:\n  greeting: from-staging\n",
      });
      const reconciler = current.reconciler({
        render: { helmNamespace: "shop", chartRegistry: createRegistryClient() },
      });
      const result = await reconciler.cycle();
      expect(result.errors).toEqual([]);
      const configMap = current.sim.get("v1", "ConfigMap", "shop", "greeter") as
        { data?: unknown } | undefined;
      expect(configMap?.data).toEqual({ greeting: "from-staging" });
      expect(reconciler.status().charts).toEqual([
        {
          name: "greeter",
          repository: `oci://${registry.host}/charts/greeter`,
          constraint: "~1.2.0",
          version: "1.2.3",
          digest: pushed.digest,
        },
      ]);
    } finally {
      await registry.close();
    }
  });

  it("a dependency on a Helm HTTP repository is downloaded, applied, and pinned by its archive's sha256", async () => {
    const repository = await startHelmHttpRepo([{ name: "greeter", version: "2.1.0" }]);
    try {
      const current = await world.setup();
      current.repo.commit({
        "env/staging/Chart.yaml": `apiVersion: v2\nname: staging\nversion: 0.1.0\ndependencies:\n  - name: greeter\n    version: "^2.0.0"\n    repository: ${repository.url}\n`,
        "env/staging/values.yaml": "greeter:\n  greeting: over-http\n",
      });
      const reconciler = current.reconciler({
        render: { helmNamespace: "shop", chartRegistry: createRegistryClient() },
      });
      const result = await reconciler.cycle();
      expect(result.errors).toEqual([]);
      const configMap = current.sim.get("v1", "ConfigMap", "shop", "greeter") as
        { data?: unknown } | undefined;
      expect(configMap?.data).toEqual({ greeting: "over-http", version: "2.1.0" });
      expect(reconciler.status().charts).toEqual([
        {
          name: "greeter",
          repository: repository.url,
          constraint: "^2.0.0",
          version: "2.1.0",
          digest: `sha256:${repository.digests["greeter-2.1.0.tgz"]}`,
        },
      ]);
    } finally {
      await repository.close();
    }
  });
});
