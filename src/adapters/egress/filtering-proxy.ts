/**
 * A filtering HTTP proxy on loopback, the only way out Ferry gives a child process
 * (docs/security.md, "Render network"). Plain HTTP requests (absolute-form) are admitted by URL,
 * HTTPS tunnels (CONNECT) by host and port, both by `core/egress-admission.ts`; then the host
 * passes the registry client's address guard (a literal before connecting, a name on every
 * address it resolves to, and the connection goes to the address that was checked), so a
 * loopback, private or link-local address is never reached. Redirects are handed back to the
 * client, whose next request is checked again. Every refusal is kept, for one line in the error.
 */
import { lookup as dnsLookup } from "node:dns";
import type { IncomingMessage, ServerResponse } from "node:http";
import { nodeHttp } from "../http/node-http.js";
import { connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { requestRefusal, tunnelRefusal } from "../../core/egress-admission.js";
import { addressProblem, guardedLookup, type LookupFunction } from "../registry/address-guard.js";

export interface FilteringProxyOptions {
  /** URL prefixes (`--allow-remote-base`); none admits nothing. */
  allowedPrefixes: readonly string[];
  /**
   * Tests only: reach loopback and private addresses (link-local stays refused), so a local
   * server can stand in for a remote base.
   */
  allowPrivateAddressesForTests?: boolean;
  lookup?: LookupFunction;
  /** Bytes relayed from every upstream together; past them each connection is cut. Unbounded when absent. */
  maxBytes?: number;
}

export interface FilteringProxy {
  /** `http://127.0.0.1:PORT`, for HTTP(S)_PROXY and git's `http.proxy`. */
  url: string;
  /** What was refused, one entry per refused request or tunnel. */
  refusals(): readonly string[];
  close(): Promise<void>;
}

const HOP_HEADERS = new Set(["proxy-authorization", "proxy-connection", "connection", "keep-alive"]);

export async function startFilteringProxy(options: FilteringProxyOptions): Promise<FilteringProxy> {
  const refusePrivate = options.allowPrivateAddressesForTests !== true;
  const lookup = guardedLookup(options.lookup ?? dnsLookup, refusePrivate);
  const refused: string[] = [];
  const sockets = new Set<Duplex>();
  const refuse = (what: string, reason: string) => {
    if (refused.length < 20) refused.push(`${what}: ${reason}`);
  };
  let relayed = 0;
  /** Counts what an upstream sends; false (and the refusal kept) once the proxy's byte budget is spent. */
  const withinBudget = (what: string, bytes: number): boolean => {
    relayed += bytes;
    if (options.maxBytes === undefined || relayed <= options.maxBytes) return true;
    refuse(what, `more than ${options.maxBytes} bytes fetched`);
    return false;
  };

  const forward = (request: IncomingMessage, response: ServerResponse) => {
    const target = request.url ?? "";
    const method = request.method ?? "GET";
    const reason = /^http:\/\//i.test(target)
      ? (requestRefusal(target, options.allowedPrefixes) ??
        addressProblem(new URL(target).hostname, refusePrivate))
      : `${JSON.stringify(target.slice(0, 200))} is not a plain-HTTP proxy request`;
    if (reason) {
      refuse(`${method} ${target.slice(0, 200)}`, reason);
      response.writeHead(403, { "content-type": "text/plain" }).end(`refused by Ferry: ${reason}\n`);
      return;
    }
    const url = new URL(target);
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(([name]) => !HOP_HEADERS.has(name.toLowerCase())),
    );
    const upstream = nodeHttp().request(
      {
        host: url.hostname,
        port: url.port || 80,
        method,
        path: `${url.pathname}${url.search}`,
        headers,
        lookup,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on("error", () => response.destroy());
        answer.on("data", (chunk: Buffer) => {
          if (!withinBudget(`${method} ${url.origin}${url.pathname}`, chunk.length)) {
            answer.destroy();
            response.destroy();
          }
        });
        answer.pipe(response);
      },
    );
    upstream.on("error", (error) => {
      refuse(`${method} ${url.origin}${url.pathname}`, error.message);
      if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" });
      response.end(`refused by Ferry: ${error.message}\n`);
    });
    request.on("error", () => upstream.destroy());
    request.pipe(upstream);
  };

  const tunnel = (request: IncomingMessage, client: Duplex, head: Buffer) => {
    const target = request.url ?? "";
    const match = /^(\[[0-9a-f:.]+\]|[^:[\]/]+):(\d{1,5})$/i.exec(target);
    const host = match?.[1]?.replace(/^\[|\]$/g, "");
    const port = Number(match?.[2]);
    const reason =
      host === undefined || !(port > 0 && port < 65536)
        ? `${JSON.stringify(target.slice(0, 200))} is not host:port`
        : (tunnelRefusal(host, port, options.allowedPrefixes) ?? addressProblem(host, refusePrivate));
    if (reason) {
      refuse(`CONNECT ${target.slice(0, 200)}`, reason);
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nrefused by Ferry: ${reason}\n`);
      return;
    }
    const upstream: Socket = connect({ host: host!, port, lookup }, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.on("data", (chunk: Buffer) => {
        if (!withinBudget(`CONNECT ${target}`, chunk.length)) {
          upstream.destroy();
          client.destroy();
        }
      });
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on("close", () => sockets.delete(upstream));
    upstream.on("error", (error) => {
      refuse(`CONNECT ${target}`, error.message);
      client.end(
        `HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\r\nrefused by Ferry: ${error.message}\n`,
      );
    });
    client.on("error", () => upstream.destroy());
  };

  const server = nodeHttp().createServer(forward);
  server.on("connect", tunnel);
  server.on("clientError", (_error, socket: Duplex) => socket.destroy());
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy()); // the client went away: nothing to answer
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    refusals: () => refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
