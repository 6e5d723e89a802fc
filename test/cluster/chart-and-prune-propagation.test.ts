/**
 * Against kube-apiserver + etcd: (1) a chart pulled from the embedded OCI registry by a
 * `ferry-chart.yaml` (packaged by the real `helm package`), rendered and applied, pinned by
 * digest in the status; (2) prune propagation as the API server records it. The tier runs no
 * kube-controller-manager, so the garbage collector never finishes a deletion: a Foreground
 * delete leaves the object with `deletionTimestamp` and the `foregroundDeletion` finalizer, an
 * Orphan delete with the `orphan` finalizer, and a Background delete removes it at once. Seen
 * for the `--prune-propagation` setting and for the per-object annotation, in Argo CD's and
 * Ferry's spelling.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { startEmbeddedRegistry } from "../../packages/sandbox/src/registry/embedded-registry.js";
import { pushChart } from "../../packages/sandbox/src/registry/push-chart.js";
import { createRegistryClient } from "../../src/adapters/registry/index.js";
import { readObject } from "./contract/backend.js";
import { realBackend } from "./contract/real-backend.js";
import { createWorld, type World } from "./contract/world.js";

vi.setConfig({ testTimeout: 180_000 });

const backend = realBackend(inject("controlPlane"));
let world: World | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await world?.close();
  world = undefined;
});

function packageChart(dir: string, name: string, version: string): Buffer {
  const files: Record<string, string> = {
    "Chart.yaml": `apiVersion: v2\nname: ${name}\nversion: ${version}\n`,
    "values.yaml": "greeting: hello\nport: 80\n",
    "templates/cm.yaml":
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-greeting\ndata:\n  greeting: {{ .Values.greeting | quote }}\n  chart: {{ .Chart.Version | quote }}\n",
    "templates/svc.yaml":
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  selector:\n    app: {{ .Release.Name }}\n  ports:\n    - port: {{ .Values.port }}\n",
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name, file)), { recursive: true });
    writeFileSync(path.join(dir, name, file), text);
  }
  execFileSync("helm", ["package", path.join(dir, name), "--destination", dir], { stdio: "pipe" });
  return readFileSync(path.join(dir, `${name}-${version}.tgz`));
}

describe("a chart from the embedded OCI registry on the real API server", () => {
  it("is pulled by Ferry, rendered with the repo's values, applied, and pinned by digest", async () => {
    const w = (world = await createWorld(backend));
    const registry = await startEmbeddedRegistry();
    cleanups.push(() => registry.close());
    const pushed = await pushChart(registry.url, "charts/shop", {
      name: "shop",
      version: "1.4.2",
      archive: packageChart(w.temp.make("ferry-chart-src-"), "shop", "1.4.2"),
    });
    w.repo.commit({
      "env/ferry-chart.yaml": `repoURL: oci://${registry.host}/charts\nchart: shop\nversion: ~1.4.0\nvaluesFiles: [values.yaml]\n`,
      "env/values.yaml": "greeting: from-the-cluster-tier\nport: 8080\n",
    });
    const reconciler = w.reconciler({
      render: { helmNamespace: w.ns, chartRegistry: createRegistryClient() },
    });
    const result = await reconciler.cycle();
    expect(result.errors).toEqual([]);
    expect(result.sync).toBe("Synced");
    // The release is named after the folder (`env`).
    const configMap = (await readObject(w.admin, "v1", "ConfigMap", w.ns, "env-greeting")) as
      { data?: unknown } | undefined;
    expect(configMap?.data).toEqual({ greeting: "from-the-cluster-tier", chart: "1.4.2" });
    const service = (await readObject(w.admin, "v1", "Service", w.ns, "env")) as
      { spec?: { ports?: { port?: number }[] } } | undefined;
    expect(service?.spec?.ports?.[0]?.port).toBe(8080);
    expect(reconciler.status().charts).toEqual([
      {
        name: "shop",
        repository: `oci://${registry.host}/charts/shop`,
        constraint: "~1.4.0",
        version: "1.4.2",
        digest: pushed.digest,
      },
    ]);
    // A second cycle pulls again (the digest unchanged) and writes nothing.
    const again = await reconciler.cycle();
    expect(again.errors).toEqual([]);
    expect(reconciler.status().charts?.[0]?.digest).toBe(pushed.digest);
  });
});

const configMap = (name: string, annotations: Record<string, string> = {}) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  annotations: ${JSON.stringify(annotations)}\ndata:\n  key: value\n`;

interface Deleting {
  metadata?: { deletionTimestamp?: string; finalizers?: string[] };
}

describe("prune propagation on the real API server", () => {
  it("sends the flag's policy and each object's own, as the API server's finalizers show", async () => {
    const w = (world = await createWorld(backend));
    const names = ["by-flag", "argo-orphan", "ferry-background", "ferry-over-argo", "kept"];
    w.repo.commit({
      "env/by-flag.yaml": configMap("by-flag"),
      "env/argo-orphan.yaml": configMap("argo-orphan", {
        "argocd.argoproj.io/sync-options": "PrunePropagationPolicy=orphan",
      }),
      "env/ferry-background.yaml": configMap("ferry-background", {
        "ferry.dev/sync-options": "PrunePropagationPolicy=background",
      }),
      // Both spellings: Ferry's wins.
      "env/ferry-over-argo.yaml": configMap("ferry-over-argo", {
        "argocd.argoproj.io/sync-options": "PrunePropagationPolicy=background",
        "ferry.dev/sync-options": "PrunePropagationPolicy=orphan",
      }),
      "env/kept.yaml": configMap("kept"),
      "env/kustomization.yaml": `resources: [${names.map((name) => `${name}.yaml`).join(", ")}]\n`,
    });
    const reconciler = w.reconciler({ prunePropagation: "Foreground", prune: { maxPrunePercent: 100 } });
    expect((await reconciler.cycle()).errors).toEqual([]);
    for (const name of names) expect(await readObject(w.admin, "v1", "ConfigMap", w.ns, name)).toBeDefined();
    cleanups.push(async () => {
      // No garbage collector here: the finalizers are taken off by hand so the objects go.
      for (const name of names)
        await w.kubectl.run([
          ...["patch", "configmap", name, "-n", w.ns, "--type=merge"],
          ...["-p", '{"metadata":{"finalizers":null}}'],
        ]);
    });

    w.repo.commit({ "env/kustomization.yaml": "resources: [kept.yaml]\n" });
    const pruned = await reconciler.cycle();
    expect(pruned.errors).toEqual([]);
    const live = async (name: string) =>
      (await readObject(w.admin, "v1", "ConfigMap", w.ns, name)) as Deleting | undefined;
    // The flag (Foreground): marked for deletion, waiting on the garbage collector.
    const byFlag = await live("by-flag");
    expect(byFlag?.metadata?.deletionTimestamp).toEqual(expect.any(String));
    expect(byFlag?.metadata?.finalizers).toEqual(["foregroundDeletion"]);
    // Argo CD's annotation (orphan): the orphan finalizer instead.
    const orphan = await live("argo-orphan");
    expect(orphan?.metadata?.deletionTimestamp).toEqual(expect.any(String));
    expect(orphan?.metadata?.finalizers).toEqual(["orphan"]);
    // Ferry's annotation (background): deleted at once, no finalizer to wait on.
    expect(await live("ferry-background")).toBeUndefined();
    // Ferry's spelling wins over Argo CD's.
    expect((await live("ferry-over-argo"))?.metadata?.finalizers).toEqual(["orphan"]);
    expect((await live("kept"))?.metadata?.deletionTimestamp).toBeUndefined();
  });
});
