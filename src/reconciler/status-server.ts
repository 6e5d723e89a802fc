/**
 * The reconciler's own small HTTP server (`--listen`): `GET /status` (JSON), `GET /metrics`
 * (Prometheus) and `GET /healthz`. Read-only; nothing here can trigger a write.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Reconciler } from "./reconciler.js";

export interface StatusServer {
  url: string;
  close(): Promise<void>;
}

/** Parses `HOST:PORT`, `:PORT` or `PORT`; IPv6 hosts in brackets. */
export function parseListenAddress(text: string): { host: string; port: number } {
  const match =
    /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text) ??
    (/^\d+$/.test(text) ? [text, undefined, "", text] : null);
  const port = match ? Number(match[3]) : NaN;
  if (!match || !Number.isInteger(port) || port < 0 || port > 65_535)
    throw new Error(`invalid listen address ${JSON.stringify(text)}: use HOST:PORT`);
  return { host: match[1] ?? (match[2] || "127.0.0.1"), port };
}

export async function startStatusServer(
  reconciler: Reconciler,
  address: { host: string; port: number },
): Promise<StatusServer> {
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    if (path === "/healthz") {
      response.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
    } else if (path === "/status") {
      response
        .writeHead(200, { "content-type": "application/json" })
        .end(`${JSON.stringify(reconciler.status(), null, 2)}\n`);
    } else if (path === "/metrics") {
      reconciler.metrics.text().then(
        (text) =>
          response.writeHead(200, { "content-type": reconciler.metrics.registry.contentType }).end(text),
        () => response.writeHead(500).end(),
      );
    } else {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address.port, address.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = address.host.includes(":") ? `[${address.host}]` : address.host;
  return {
    url: `http://${host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
