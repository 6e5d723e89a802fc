import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { pushChart } from "../../packages/sandbox/src/registry/push-chart.js";
import {
  startEmbeddedRegistry,
  type EmbeddedRegistry,
} from "../../packages/sandbox/src/registry/embedded-registry.js";
import { createRegistryClient } from "../../src/adapters/registry/index.js";
import { unpackChartArchive } from "../../src/reconciler/chart-archive.js";
import { renderPathWithSources } from "../../src/reconciler/render-folder.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function writeTree(root: string, files: Record<string, string>): void {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
}

/** A real chart archive, built by `helm package`. */
function packageChart(name: string, version: string): Buffer {
  const work = tempDir("ferry-chart-src-");
  writeTree(work, {
    [`${name}/Chart.yaml`]: `apiVersion: v2\nname: ${name}\nversion: ${version}\n`,
    [`${name}/values.yaml`]: "greeting: hello\n",
    [`${name}/templates/cm.yaml`]:
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Chart.Name }}-{{ .Chart.Version }}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
  });
  execFileSync("helm", ["package", path.join(work, name), "--destination", work], { stdio: "pipe" });
  return readFileSync(path.join(work, `${name}-${version}.tgz`));
}

async function registry(): Promise<EmbeddedRegistry> {
  const started = await startEmbeddedRegistry();
  cleanups.push(() => started.close());
  return started;
}

/** A config repo whose `app` chart depends on `lib` at `version` from `repository`. */
function configRepo(repository: string, version: string): string {
  const root = tempDir("ferry-oci-repo-");
  writeTree(root, {
    "app/Chart.yaml": `apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n  - name: lib\n    version: "${version}"\n    repository: ${repository}\n`,
    "app/values.yaml": "lib:\n  greeting: from-the-parent\n",
    "app/templates/own.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: own\n",
  });
  return root;
}

const names = (objects: { object: { metadata?: unknown } }[]) =>
  objects.map((rendered) => (rendered.object.metadata as { name: string }).name).sort();

describe("a chart's dependencies on OCI repositories", () => {
  it("are downloaded by Ferry's registry client into a private copy, rendered, and pinned by digest", async () => {
    const oci = await registry();
    const pushed = await pushChart(oci.url, "charts/lib", {
      name: "lib",
      version: "1.2.3",
      archive: packageChart("lib", "1.2.3"),
    });
    const root = configRepo(`oci://${oci.host}/charts`, "1.2.3");
    const result = await renderPathWithSources(root, "app", { chartRegistry: createRegistryClient() });
    expect(names(result.objects)).toEqual(["lib-1.2.3", "own"]);
    const lib = result.objects.find(
      (rendered) => rendered.object.kind === "ConfigMap" && names([rendered])[0] === "lib-1.2.3",
    );
    expect(lib?.object.data).toEqual({ greeting: "from-the-parent" });
    expect(result.charts).toEqual([
      {
        name: "lib",
        repository: `oci://${oci.host}/charts/lib`,
        constraint: "1.2.3",
        version: "1.2.3",
        digest: pushed.digest,
      },
    ]);
    // The checkout is never written to: the download went into the private copy.
    expect(existsSync(path.join(root, "app", "charts"))).toBe(false);
  });

  it("resolve a semver range against the repository's tags", async () => {
    const oci = await registry();
    const digests: Record<string, string> = {};
    for (const version of ["1.0.0", "1.4.0", "2.0.0"])
      digests[version] = (
        await pushChart(oci.url, "charts/lib", {
          name: "lib",
          version,
          archive: packageChart("lib", version),
        })
      ).digest;
    const root = configRepo(`oci://${oci.host}/charts`, "^1.0.0");
    const result = await renderPathWithSources(root, "app", { chartRegistry: createRegistryClient() });
    expect(names(result.objects)).toEqual(["lib-1.4.0", "own"]);
    expect(result.charts.map((pin) => [pin.version, pin.digest])).toEqual([["1.4.0", digests["1.4.0"]]]);
  });

  it("a missing version is a one-line error", async () => {
    const oci = await registry();
    await pushChart(oci.url, "charts/lib", {
      name: "lib",
      version: "1.2.3",
      archive: packageChart("lib", "1.2.3"),
    });
    const exact = configRepo(`oci://${oci.host}/charts`, "9.9.9");
    const error = await renderPathWithSources(exact, "app", { chartRegistry: createRegistryClient() }).catch(
      (caught: Error) => caught,
    );
    expect((error as Error).message).toBe(`chart oci://${oci.host}/charts/lib has no version 9.9.9`);
    const range = configRepo(`oci://${oci.host}/charts`, ">=3.0.0");
    await expect(
      renderPathWithSources(range, "app", { chartRegistry: createRegistryClient() }),
    ).rejects.toThrow(
      /^chart dependency lib: no version of oci:\/\/127\.0\.0\.1:\d+\/charts\/lib satisfies ">=3\.0\.0"$/,
    );
  });

  it("go through the address guard: a refused host is a one-line error and nothing is rendered", async () => {
    const oci = await registry();
    await pushChart(oci.url, "charts/lib", {
      name: "lib",
      version: "1.2.3",
      archive: packageChart("lib", "1.2.3"),
    });
    const before = oci.requestCount();
    const loopback = configRepo(`oci://${oci.host}/charts`, "1.2.3");
    const refused = await renderPathWithSources(loopback, "app", {
      chartRegistry: createRegistryClient({ refusePrivateRegistries: true }),
    }).catch((caught: Error) => caught);
    expect((refused as Error).message).not.toContain("\n");
    expect((refused as Error).message).toMatch(/127\.0\.0\.1/);
    expect(oci.requestCount()).toBe(before);
    // Link-local addresses (cloud metadata) are refused whatever the client's settings.
    const metadata = configRepo("oci://169.254.169.254/charts", "1.2.3");
    const linkLocal = await renderPathWithSources(metadata, "app", {
      chartRegistry: createRegistryClient(),
    }).catch((caught: Error) => caught);
    expect(linkLocal).toBeInstanceOf(Error);
    expect((linkLocal as Error).message).not.toContain("\n");
    expect((linkLocal as Error).message).toMatch(/169\.254\.169\.254/);
  });

  it("without a chart registry are not downloaded (helm reports them missing)", async () => {
    const root = configRepo("oci://127.0.0.1:1/charts", "1.2.3");
    await expect(renderPathWithSources(root, "app")).rejects.toThrow(/lib/);
  });
});

describe("an environment folder whose ferry-chart.yaml names a chart in an OCI registry", () => {
  it("pulls the chart, pins it, and renders it with the folder's values files", async () => {
    const oci = await registry();
    const pushed = await pushChart(oci.url, "charts/lib", {
      name: "lib",
      version: "1.2.3",
      archive: packageChart("lib", "1.2.3"),
    });
    const root = tempDir("ferry-oci-source-");
    writeTree(root, {
      "env/prod/ferry-chart.yaml": `repoURL: oci://${oci.host}/charts\nchart: lib\nversion: 1.2.3\nvaluesFiles: [values.yaml]\n`,
      "env/prod/values.yaml": "greeting: from-prod\n",
    });
    const result = await renderPathWithSources(root, "env/prod", { chartRegistry: createRegistryClient() });
    expect(result.objects.map((rendered) => rendered.object)).toEqual([
      expect.objectContaining({ kind: "ConfigMap", data: { greeting: "from-prod" } }),
    ]);
    expect(result.charts).toEqual([
      {
        name: "lib",
        repository: `oci://${oci.host}/charts/lib`,
        constraint: "1.2.3",
        version: "1.2.3",
        digest: pushed.digest,
      },
    ]);
  });

  it("refuses a ferry-chart.yaml that is neither oci:// nor http(s):// with a one-line error", async () => {
    const root = tempDir("ferry-oci-source-");
    writeTree(root, {
      "env/prod/ferry-chart.yaml": "repoURL: git://charts.example.invalid\nchart: lib\nversion: 1.2.3\n",
    });
    await expect(
      renderPathWithSources(root, "env/prod", { chartRegistry: createRegistryClient() }),
    ).rejects.toThrow(
      /^env\/prod\/ferry-chart\.yaml: repoURL: must be oci:\/\/host\/path or an http\(s\):\/\/ Helm repository$/,
    );
  });
});

/** One tar entry (ustar header + body), for archives `helm package` would never write. */
function tarEntry(name: string, type: string, body = "", linkName = ""): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 100);
  header.write("0000644\0", 100);
  header.write("0000000\0", 108);
  header.write("0000000\0", 116);
  header.write(`${Buffer.byteLength(body).toString(8).padStart(11, "0")}\0`, 124);
  header.write("00000000000\0", 136);
  header.write(type, 156);
  header.write(linkName, 157, 100);
  header.write("ustar\0", 257);
  header.write("00", 263);
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  const padded = Buffer.alloc(Math.ceil(Buffer.byteLength(body) / 512) * 512);
  padded.write(body);
  return Buffer.concat([header, padded]);
}
const archiveOf = (...entries: Buffer[]) => gzipSync(Buffer.concat([...entries, Buffer.alloc(1024)]));
const CHART_YAML = tarEntry("lib/Chart.yaml", "0", "apiVersion: v2\nname: lib\nversion: 1.0.0\n");

describe("a downloaded chart archive", () => {
  it("unpacks regular files into the destination", async () => {
    const dest = path.join(tempDir("ferry-unpack-"), "lib");
    await unpackChartArchive(
      archiveOf(CHART_YAML, tarEntry("lib/templates/a.yaml", "0", "a: 1\n")),
      dest,
      "lib",
    );
    expect(readFileSync(path.join(dest, "templates", "a.yaml"), "utf8")).toBe("a: 1\n");
  });

  it.each([
    [
      "a symlink",
      tarEntry("lib/templates/link.yaml", "2", "", "/etc/passwd"),
      /not a regular file or folder/,
    ],
    [
      "a hard link",
      tarEntry("lib/templates/hard.yaml", "1", "", "lib/Chart.yaml"),
      /not a regular file or folder/,
    ],
    ["a path escape", tarEntry("lib/../../evil.yaml", "0", "x"), /leaves the archive/],
    ["an absolute path", tarEntry("/tmp/evil.yaml", "0", "x"), /is not relative/],
    ["a second top folder", tarEntry("other/x.yaml", "0", "x"), /entries under both/],
  ])("refuses %s before writing anything", async (_what, entry, message) => {
    const parent = tempDir("ferry-unpack-");
    const dest = path.join(parent, "lib");
    await expect(unpackChartArchive(archiveOf(CHART_YAML, entry), dest, "oci://x/lib:1.0.0")).rejects.toThrow(
      message,
    );
    expect(existsSync(dest)).toBe(false);
  });

  it("refuses an archive that inflates past the limit", async () => {
    const big = archiveOf(CHART_YAML, tarEntry("lib/big.yaml", "0", "x".repeat(200_000)));
    await expect(
      unpackChartArchive(big, path.join(tempDir("ferry-unpack-"), "lib"), "lib", {
        maxArchiveBytes: 1_000_000,
        maxUnpackedBytes: 100_000,
        maxFiles: 10,
      }),
    ).rejects.toThrow(/inflates to more than 100000 bytes/);
  });

  it("refuses a symlink made by tar itself", async () => {
    const work = tempDir("ferry-tar-");
    writeTree(work, { "lib/Chart.yaml": "apiVersion: v2\nname: lib\nversion: 1.0.0\n" });
    symlinkSync("/etc/passwd", path.join(work, "lib", "values.yaml"));
    execFileSync("tar", ["-czf", path.join(work, "lib.tgz"), "-C", work, "lib"]);
    await expect(
      unpackChartArchive(readFileSync(path.join(work, "lib.tgz")), path.join(work, "out"), "lib"),
    ).rejects.toThrow(/values\.yaml.*not a regular file or folder/);
  });
});
