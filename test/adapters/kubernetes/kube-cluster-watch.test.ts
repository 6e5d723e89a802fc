/**
 * A watch whose connection is cut reopens (src/adapters/kubernetes/kube-cluster.ts): against a
 * loopback HTTP/2 server of Node's own that serves discovery and a watch, and destroys the first
 * watch's connection after one event. The outage contract (test/cluster/contract/outage-suite.ts)
 * does the same through a relay in front of kube-apiserver.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KubeCluster } from "../../../src/adapters/kubernetes/kube-cluster.js";
import { selfSignedCertificate } from "../../support/self-signed.js";

let dir: string;
let pem: { key: Buffer; cert: Buffer };

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "ferry-watch-"));
  const files = selfSignedCertificate(dir, "server", { subject: "/CN=localhost", altName: "IP:127.0.0.1" });
  pem = { key: readFileSync(files.keyPath), cert: readFileSync(files.certPath) };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DISCOVERY = {
  kind: "APIResourceList",
  groupVersion: "v1",
  resources: [{ name: "configmaps", kind: "ConfigMap", namespaced: true, verbs: ["get", "list", "watch"] }],
};

async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

type WatchHandler = (stream: http2.ServerHttp2Stream, attempt: number) => void;

/** A loopback API server serving v1 discovery and, for each watch of shop's ConfigMaps, `onWatch`. */
async function startServer(
  onWatch: WatchHandler,
): Promise<{ cluster: KubeCluster; watches: () => number; close(): void }> {
  let watches = 0;
  const server = http2.createSecureServer(pem);
  server.on("sessionError", () => {});
  server.on("stream", (stream, headers) => {
    stream.on("error", () => {});
    const url = String(headers[":path"]);
    if (url === "/api/v1") {
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.end(JSON.stringify(DISCOVERY));
    } else if (url.startsWith("/api/v1/namespaces/shop/configmaps?") && url.includes("watch=true")) {
      watches += 1;
      onWatch(stream, watches);
    } else {
      stream.respond({ ":status": 404 });
      stream.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const cluster = KubeCluster.fromOptions({
    kubeconfig: JSON.stringify({
      clusters: [
        { name: "c", cluster: { server: url, "certificate-authority-data": pem.cert.toString("base64") } },
      ],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
      "current-context": "c",
    }),
  });
  return {
    cluster,
    watches: () => watches,
    close: () => {
      cluster.close();
      server.close();
    },
  };
}

function sendEvent(stream: http2.ServerHttp2Stream, name: string): void {
  stream.respond({ ":status": 200, "content-type": "application/json" });
  stream.write(`${JSON.stringify({ type: "ADDED", object: { kind: "ConfigMap", metadata: { name } } })}\n`);
}

describe("KubeCluster.watch", () => {
  const watchIn = async (cluster: KubeCluster) => {
    const seen = { changes: 0, reconnects: 0 };
    const stop = await cluster.watch(
      "v1",
      "ConfigMap",
      "shop",
      "app.kubernetes.io/managed-by=ferry",
      () => (seen.changes += 1),
      () => (seen.reconnects += 1),
    );
    return { seen, stop };
  };

  it("reopens a watch whose connection was cut, and says it reconnected", async () => {
    const server = await startServer((stream, attempt) => {
      sendEvent(stream, `c${attempt}`);
      // The first watch's connection is cut mid-stream (a relay gone, a node lost).
      if (attempt === 1) setTimeout(() => stream.session?.destroy(), 100);
    });
    const { seen, stop } = await watchIn(server.cluster);
    try {
      // The watch is reopened 5 s after its end.
      await until("the watch to reconnect", () => seen.reconnects === 1 && server.watches() === 2);
      await until("the second watch's event", () => seen.changes >= 2);
    } finally {
      stop();
      server.close();
    }
  });

  it("says it reconnected when it opens after a first attempt that failed", async () => {
    const server = await startServer((stream, attempt) => {
      if (attempt === 1) {
        stream.respond({ ":status": 503 });
        stream.end();
      } else sendEvent(stream, "c");
    });
    const { seen, stop } = await watchIn(server.cluster);
    try {
      await until("the watch to open", () => server.watches() === 2 && seen.changes === 1);
      expect(seen.reconnects).toBe(1);
    } finally {
      stop();
      server.close();
    }
  });
});
