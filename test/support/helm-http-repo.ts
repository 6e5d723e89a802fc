/**
 * A Helm HTTP chart repository on loopback, as `helm repo index` lays one out: charts packaged
 * by the real `helm package`, `index.yaml` written by the real `helm repo index --url`, served by
 * a small node server on 127.0.0.1 port 0 under `/charts/`. Optionally behind HTTP Basic auth
 * (a 401 with `WWW-Authenticate: Basic`, as ChartMuseum answers). Counts requests, by path.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export interface HelmHttpRepo {
  /** `http://127.0.0.1:PORT/charts` */
  url: string;
  host: string;
  /** sha256 hex of each archive, by `<name>-<version>.tgz`. */
  digests: Record<string, string>;
  /** Paths requested so far, in order. */
  requests: string[];
  /** Replaces the served index.yaml (for answers helm would never write). */
  setIndex(text: string): void;
  close(): Promise<void>;
}

export interface HelmHttpChart {
  name: string;
  version: string;
  /** Extra files of the chart (path → text); default a ConfigMap `<name>` with `.Values.greeting`. */
  files?: Record<string, string>;
}

const CONFIG_MAP =
  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Chart.Name }}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n  version: {{ .Chart.Version | quote }}\n";

export async function startHelmHttpRepo(
  charts: readonly HelmHttpChart[],
  options: { basicAuth?: { username: string; password: string } } = {},
): Promise<HelmHttpRepo> {
  const work = mkdtempSync(path.join(tmpdir(), "ferry-helm-repo-"));
  const served = path.join(work, "served");
  mkdirSync(served);
  const digests: Record<string, string> = {};
  for (const chart of charts) {
    const source = path.join(work, "src", `${chart.name}-${chart.version}`, chart.name);
    const files = {
      "Chart.yaml": `apiVersion: v2\nname: ${chart.name}\nversion: ${chart.version}\n`,
      "values.yaml": "greeting: hello\n",
      "templates/cm.yaml": CONFIG_MAP,
      ...chart.files,
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(source, file)), { recursive: true });
      writeFileSync(path.join(source, file), text);
    }
    execFileSync("helm", ["package", source, "--destination", served], { stdio: "pipe" });
    const archive = `${chart.name}-${chart.version}.tgz`;
    digests[archive] = createHash("sha256")
      .update(readFileSync(path.join(served, archive)))
      .digest("hex");
  }
  const requests: string[] = [];
  let index: Buffer | undefined;
  const expected = options.basicAuth
    ? `Basic ${Buffer.from(`${options.basicAuth.username}:${options.basicAuth.password}`).toString("base64")}`
    : undefined;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    requests.push(url.pathname);
    if (expected && req.headers.authorization !== expected) {
      res.writeHead(401, { "www-authenticate": 'Basic realm="charts"' }).end("unauthorized\n");
      return;
    }
    const name = url.pathname.startsWith("/charts/") ? url.pathname.slice("/charts/".length) : "";
    if (!/^[A-Za-z0-9._-]+$/.test(name)) return void res.writeHead(404).end();
    try {
      const body = name === "index.yaml" && index ? index : readFileSync(path.join(served, name));
      res.writeHead(200, { "content-length": body.length }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const url = `http://${host}/charts`;
  execFileSync("helm", ["repo", "index", served, "--url", url], { stdio: "pipe" });
  return {
    url,
    host,
    digests,
    requests,
    setIndex: (text) => {
      index = Buffer.from(text);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(work, { recursive: true, force: true });
    },
  };
}
