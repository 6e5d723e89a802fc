/**
 * The reconciler's own small HTTP server (`--listen`): `GET /status` (JSON), `GET /metrics`
 * (Prometheus) and `GET /healthz`. Read-only; nothing here can trigger a write. `/healthz` is open
 * (the kubelet probes it) and fails while a cycle is stuck; `/status` and `/metrics` name the
 * cluster's objects and errors, so off loopback they need `Authorization: Bearer <token>`
 * (FERRY_STATUS_TOKEN) or a listener of their own on an internal address (`--status-listen`).
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, Server } from "node:http";
import { nodeHttp } from "./node-http.js";
import type { AddressInfo } from "node:net";
import type { Reconciler } from "../../reconciler/reconciler.js";

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

/** Who may read `/status` and `/metrics` here: anyone (`open`), or holders of `token` (none: nobody). */
export type StatusAccess = { open: true } | { token: string | undefined };

/** Open on loopback (only this pod or host can reach it); elsewhere the token decides. */
export function accessFor(host: string, token: string | undefined): StatusAccess {
  const loopback = host === "localhost" || host === "::1" || /^127\./.test(host);
  return loopback ? { open: true } : { token };
}

function tokenMatches(request: IncomingMessage, token: string): boolean {
  const given = Buffer.from(request.headers.authorization ?? "");
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function startStatusServer(
  reconciler: Reconciler,
  address: { host: string; port: number },
  access: StatusAccess = accessFor(address.host, undefined),
): Promise<StatusServer> {
  const server: Server = nodeHttp().createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    if (path === "/healthz") {
      const health = reconciler.health();
      response.writeHead(health.ok ? 200 : 503, { "content-type": "text/plain" }).end(`${health.message}\n`);
      return;
    }
    if ((path === "/status" || path === "/metrics") && !("open" in access)) {
      if (!access.token) {
        response
          .writeHead(404, { "content-type": "text/plain" })
          .end("not served on this address: set FERRY_STATUS_TOKEN or use --status-listen\n");
        return;
      }
      if (!tokenMatches(request, access.token)) {
        response
          .writeHead(401, {
            "content-type": "text/plain",
            "www-authenticate": 'Bearer realm="ferry-reconciler"',
          })
          .end("a bearer token is required\n");
        return;
      }
    }
    if (path === "/status") {
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
