/**
 * Charts from Helm HTTP repositories (`index.yaml` + archives, built by the real `helm package`
 * and `helm repo index`, served on loopback): named by a `ferry-chart.yaml` or as a `Chart.yaml`
 * dependency, downloaded by Ferry's registry client (address guard, size caps, host-bound
 * credentials), checked against the index's digest, rendered, and pinned by the archive's sha256.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createRegistryClient } from "../../src/adapters/registry/index.js";
import { chartRegistryClient } from "../../src/cli/chart-registry.js";
import { renderPathWithSources } from "../../src/reconciler/render-folder.js";
import { startHelmHttpRepo, type HelmHttpChart, type HelmHttpRepo } from "../support/helm-http-repo.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function writeTree(root: string, files: Record<string, string>): string {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

async function repo(
  charts: readonly HelmHttpChart[],
  options?: Parameters<typeof startHelmHttpRepo>[1],
): Promise<HelmHttpRepo> {
  const started = await startHelmHttpRepo(charts, options);
  cleanups.push(() => started.close());
  return started;
}

const source = (repoURL: string, version: string) =>
  `repoURL: ${repoURL}\nchart: greeter\nversion: "${version}"\nvaluesFiles: [values.yaml]\n`;

const configMaps = (objects: { object: Record<string, unknown> }[]) =>
  objects
    .filter((rendered) => rendered.object.kind === "ConfigMap")
    .map((rendered) => [(rendered.object.metadata as { name: string }).name, rendered.object.data]);

describe("a ferry-chart.yaml naming a chart in a Helm HTTP repository", () => {
  it("pulls the version the range picks from index.yaml, renders it with the folder's values, pins its sha256", async () => {
    const http = await repo(["1.0.0", "1.4.0", "2.0.0"].map((version) => ({ name: "greeter", version })));
    const root = writeTree(tempDir("ferry-http-source-"), {
      "env/prod/ferry-chart.yaml": source(http.url, "^1.0.0"),
      "env/prod/values.yaml": "greeting: from-prod\n",
    });
    const result = await renderPathWithSources(root, "env/prod", { chartRegistry: createRegistryClient() });
    expect(configMaps(result.objects)).toEqual([["greeter", { greeting: "from-prod", version: "1.4.0" }]]);
    expect(result.charts).toEqual([
      {
        name: "greeter",
        repository: http.url,
        constraint: "^1.0.0",
        version: "1.4.0",
        digest: `sha256:${http.digests["greeter-1.4.0.tgz"]}`,
      },
    ]);
    expect(http.requests).toEqual(["/charts/index.yaml", "/charts/greeter-1.4.0.tgz"]);
  });

  it("a version the index lacks, and a chart it lacks, are one-line errors", async () => {
    const http = await repo([{ name: "greeter", version: "1.0.0" }]);
    const exact = writeTree(tempDir("ferry-http-source-"), {
      "env/prod/ferry-chart.yaml": source(http.url, "9.9.9"),
      "env/prod/values.yaml": "{}\n",
    });
    await expect(
      renderPathWithSources(exact, "env/prod", { chartRegistry: createRegistryClient() }),
    ).rejects.toThrow(`chart greeter in ${http.url} has no version 9.9.9`);
    const other = writeTree(tempDir("ferry-http-source-"), {
      "env/prod/ferry-chart.yaml": `repoURL: ${http.url}/\nchart: nothing\nversion: 1.0.0\n`,
    });
    const error = await renderPathWithSources(other, "env/prod", {
      chartRegistry: createRegistryClient(),
    }).catch((caught: Error) => caught);
    expect((error as Error).message).toBe(`chart repository ${http.url} has no chart nothing`);
  });

  it("refuses a repository outside the address guard with one line, sending nothing", async () => {
    const http = await repo([{ name: "greeter", version: "1.0.0" }]);
    const root = writeTree(tempDir("ferry-http-source-"), {
      "env/prod/ferry-chart.yaml": source(http.url, "1.0.0"),
      "env/prod/values.yaml": "{}\n",
    });
    // Production refuses loopback and private hosts (FERRY_ALLOW_PRIVATE_REGISTRIES unset).
    const refused = await renderPathWithSources(root, "env/prod", {
      chartRegistry: chartRegistryClient({ NODE_ENV: "production" }),
    }).catch((caught: Error) => caught);
    expect((refused as Error).message).toBe(
      `${http.host}: registries at private or loopback addresses are refused`,
    );
    expect(http.requests).toEqual([]);
    // Link-local (cloud metadata) is refused whatever the settings.
    const metadata = writeTree(tempDir("ferry-http-source-"), {
      "env/prod/ferry-chart.yaml": source("http://169.254.169.254/charts", "1.0.0"),
      "env/prod/values.yaml": "{}\n",
    });
    const linkLocal = await renderPathWithSources(metadata, "env/prod", {
      chartRegistry: createRegistryClient(),
    }).catch((caught: Error) => caught);
    expect((linkLocal as Error).message).toBe(
      "169.254.169.254: registries at link-local addresses are refused",
    );
  });

  it("refuses an archive URL in the index that points outside the guard, and an archive whose digest differs", async () => {
    const http = await repo([{ name: "greeter", version: "1.0.0" }]);
    const root = writeTree(tempDir("ferry-http-source-"), {
      "env/prod/ferry-chart.yaml": source(http.url, "1.0.0"),
      "env/prod/values.yaml": "{}\n",
    });
    const digest = http.digests["greeter-1.0.0.tgz"]!;
    const entry = (url: string, sha: string) =>
      `apiVersion: v1\nentries:\n  greeter:\n    - name: greeter\n      version: 1.0.0\n      digest: "${sha}"\n      urls: [${url}]\n`;
    http.setIndex(entry("http://169.254.169.254/greeter-1.0.0.tgz", digest));
    await expect(
      renderPathWithSources(root, "env/prod", { chartRegistry: createRegistryClient() }),
    ).rejects.toThrow(/^169\.254\.169\.254: registries at link-local addresses are refused$/);
    http.setIndex(entry("greeter-1.0.0.tgz", "0".repeat(64)));
    // (the digest quoted, as helm writes it; the archive itself is the real one)
    await expect(
      renderPathWithSources(root, "env/prod", { chartRegistry: createRegistryClient() }),
    ).rejects.toThrow(
      `${http.url}/greeter-1.0.0.tgz: sha256 ${digest} is not the digest index.yaml names for greeter 1.0.0; refused before rendering`,
    );
  });

  it("bounds index.yaml and the archive before reading them whole", async () => {
    const http = await repo([{ name: "greeter", version: "1.0.0" }]);
    const root = writeTree(tempDir("ferry-http-source-"), {
      "env/prod/ferry-chart.yaml": source(http.url, "1.0.0"),
      "env/prod/values.yaml": "{}\n",
    });
    const render = (limits: { maxIndexBytes: number; maxArchiveBytes: number }) =>
      renderPathWithSources(root, "env/prod", {
        chartRegistry: createRegistryClient(),
        chartArchiveLimits: { maxUnpackedBytes: 1024 * 1024, maxFiles: 100, ...limits },
      });
    await expect(render({ maxIndexBytes: 100, maxArchiveBytes: 1024 * 1024 })).rejects.toThrow(
      /exceeds the 100-byte cap$/,
    );
    await expect(render({ maxIndexBytes: 1024 * 1024, maxArchiveBytes: 100 })).rejects.toThrow(
      /exceeds the 100-byte cap$/,
    );
    http.setIndex("entries: &a [*a]\n");
    await expect(render({ maxIndexBytes: 1024 * 1024, maxArchiveBytes: 1024 * 1024 })).rejects.toThrow(
      new RegExp(`^${http.url.replace(/[.]/g, "\\.")}/index\\.yaml: `),
    );
  });

  it("sends the operator's Docker config credentials for exactly the repository host, on its Basic challenge", async () => {
    const basicAuth = { username: "reader", password: "s3cret-chart-pass" };
    const http = await repo([{ name: "greeter", version: "1.0.0" }], { basicAuth });
    const root = writeTree(tempDir("ferry-http-source-"), {
      "env/prod/ferry-chart.yaml": source(http.url, "1.0.0"),
      "env/prod/values.yaml": "greeting: private\n",
    });
    const anonymous = await renderPathWithSources(root, "env/prod", {
      chartRegistry: chartRegistryClient({}),
    }).catch((caught: Error) => caught);
    expect((anonymous as Error).message).toMatch(new RegExp(`^${http.host}: requires credentials`));
    const dockerConfig = path.join(tempDir("ferry-docker-config-"), "config.json");
    const auth = Buffer.from(`${basicAuth.username}:${basicAuth.password}`).toString("base64");
    writeFileSync(dockerConfig, JSON.stringify({ auths: { [http.host]: { auth } } }));
    // Bound to another host: never sent to this one.
    const unbound = await renderPathWithSources(root, "env/prod", {
      chartRegistry: chartRegistryClient({
        FERRY_DOCKER_CONFIG: dockerConfig,
        FERRY_DOCKER_CONFIG_HOSTS: "charts.example.com",
      }),
    }).catch((caught: Error) => caught);
    expect((unbound as Error).message).toBe(
      `${http.host}: FERRY_DOCKER_CONFIG is bound to charts.example.com, not ${http.host}: Ferry never sends it to another host`,
    );
    const result = await renderPathWithSources(root, "env/prod", {
      chartRegistry: chartRegistryClient({
        FERRY_DOCKER_CONFIG: dockerConfig,
        FERRY_DOCKER_CONFIG_HOSTS: http.host,
      }),
    });
    expect(configMaps(result.objects)).toEqual([["greeter", { greeting: "private", version: "1.0.0" }]]);
    expect(JSON.stringify(result)).not.toContain(basicAuth.password);
  });
});

describe("a Chart.yaml dependency on a Helm HTTP repository", () => {
  it("is downloaded into a private copy, rendered with the parent's values, and pinned", async () => {
    const http = await repo(["1.2.0", "1.2.3"].map((version) => ({ name: "greeter", version })));
    const root = writeTree(tempDir("ferry-http-dep-"), {
      "app/Chart.yaml": `apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n  - name: greeter\n    version: "~1.2.0"\n    repository: ${http.url}\n`,
      "app/values.yaml": "greeter:\n  greeting: from-the-parent\n",
      "app/templates/own.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\n",
    });
    const result = await renderPathWithSources(root, "app", { chartRegistry: createRegistryClient() });
    expect(configMaps(result.objects)).toEqual([
      ["greeter", { greeting: "from-the-parent", version: "1.2.3" }],
      ["own", undefined],
    ]);
    expect(result.charts).toEqual([
      {
        name: "greeter",
        repository: http.url,
        constraint: "~1.2.0",
        version: "1.2.3",
        digest: `sha256:${http.digests["greeter-1.2.3.tgz"]}`,
      },
    ]);
    expect(existsSync(path.join(root, "app", "charts"))).toBe(false);
    // A committed copy in charts/ is used as committed: nothing is downloaded.
    const vendored = path.join(root, "app", "charts", "greeter");
    writeTree(vendored, {
      "Chart.yaml": "apiVersion: v2\nname: greeter\nversion: 1.2.0\n",
      "templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: committed\n",
    });
    const before = http.requests.length;
    const again = await renderPathWithSources(root, "app", { chartRegistry: createRegistryClient() });
    expect(configMaps(again.objects).map(([name]) => name)).toEqual(["committed", "own"]);
    expect(again.charts).toEqual([]);
    expect(http.requests.length).toBe(before);
    expect(readFileSync(path.join(vendored, "Chart.yaml"), "utf8")).toContain("1.2.0");
  });
});
