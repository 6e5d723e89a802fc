/**
 * The reconciler's HTTP to its API server (src/adapters/kubernetes/kube-transport.ts) against
 * loopback servers of Node's own: one HTTP/2 connection for many requests, HTTP/1.1 where a server
 * offers no HTTP/2, a tunnel through proxy-url, a client certificate, the deadline that leaves a
 * silent connection, and the bound on an answer's size. The real kube-apiserver tier runs the same
 * code (test/cluster/connections.test.ts).
 */
import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import https from "node:https";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ClusterAccess, Credentials } from "../../../src/adapters/kubernetes/cluster-access.js";
import {
  KubeApiError,
  KubeTransport,
  RequestTimeoutError,
} from "../../../src/adapters/kubernetes/kube-transport.js";
import { selfSignedCertificate } from "../../support/self-signed.js";

let dir: string;
let serverPem: { key: Buffer; cert: Buffer };
let clientPem: { key: Buffer; cert: Buffer };

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "ferry-transport-"));
  const server = selfSignedCertificate(dir, "server", { subject: "/CN=localhost", altName: "IP:127.0.0.1" });
  serverPem = { key: readFileSync(server.keyPath), cert: readFileSync(server.certPath) };
  const client = selfSignedCertificate(dir, "client", { subject: "/CN=ferry-reconciler" });
  clientPem = { key: readFileSync(client.keyPath), cert: readFileSync(client.certPath) };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function accessTo(
  server: string,
  extra: Partial<Omit<ClusterAccess, "credentials">> & { credentials?: Credentials } = {},
): ClusterAccess {
  const { credentials = { authorization: "Bearer t0ken" }, ...rest } = extra;
  return {
    server,
    namespace: undefined,
    ca: serverPem.cert,
    rejectUnauthorized: true,
    servername: undefined,
    proxyUrl: undefined,
    credentials: async () => credentials,
    ...rest,
  };
}

/** Answers every request with what it saw; `/hang` never answers, `/big` answers 64 KiB, `/missing` a 404 Status. */
function answer(
  request: { method?: string; url?: string; headers: http.IncomingHttpHeaders },
  body: string,
  respond: (status: number, text: string) => void,
  peer?: string,
): void {
  if (request.url === "/hang") return;
  if (request.url === "/big") return respond(200, JSON.stringify({ data: "x".repeat(64 * 1024) }));
  if (request.url === "/missing")
    return respond(404, JSON.stringify({ kind: "Status", code: 404, message: 'configmaps "web" not found' }));
  respond(
    200,
    JSON.stringify({
      method: request.method,
      path: request.url,
      authorization: request.headers.authorization,
      contentType: request.headers["content-type"],
      body,
      peer,
    }),
  );
}

interface Listening {
  url: string;
  /** TCP connections accepted (one whose HTTP/2 handshake was refused too). */
  connections: () => number;
  /** Connections still open. */
  openSockets: () => number;
  close: () => Promise<void>;
}

async function listen(server: net.Server, scheme: "https" | "http"): Promise<Listening> {
  let count = 0;
  server.on("connection", () => (count += 1));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const sockets = new Set<net.Socket>();
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return {
    url: `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => count,
    openSockets: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function http2Server(options: http2.SecureServerOptions = {}): http2.Http2SecureServer {
  const server = http2.createSecureServer({ ...serverPem, ...options });
  server.on("stream", (stream, headers) => {
    let body = "";
    stream.on("data", (chunk) => (body += chunk));
    stream.on("end", () => {
      const socket = stream.session?.socket as import("node:tls").TLSSocket | undefined;
      const peer = socket?.getPeerCertificate?.()?.subject?.CN as string | undefined;
      answer(
        {
          method: String(headers[":method"]),
          url: String(headers[":path"]),
          headers: headers as http.IncomingHttpHeaders,
        },
        body,
        (status, text) => {
          stream.respond({ ":status": status, "content-type": "application/json" });
          stream.end(text);
        },
        peer,
      );
    });
    stream.on("error", () => {});
  });
  server.on("sessionError", () => {});
  return server;
}

function http1Handler(request: http.IncomingMessage, response: http.ServerResponse): void {
  let body = "";
  request.on("data", (chunk) => (body += chunk));
  request.on("end", () =>
    answer(request, body, (status, text) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(text);
    }),
  );
}

describe("KubeTransport", () => {
  const open: Array<{ close(): unknown }> = [];
  afterEach(async () => {
    for (const item of open.splice(0).reverse()) await item.close();
  });

  it("sends every request of the process over one HTTP/2 connection, with its token, query and body", async () => {
    const server = await listen(http2Server(), "https");
    open.push(server);
    const transport = new KubeTransport(accessTo(server.url), 30_000);
    open.push(transport);
    const answers = (await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        transport.request({
          method: "PATCH",
          path: `/api/v1/namespaces/shop/configmaps/settings-${i}`,
          query: { dryRun: i % 2 ? "All" : undefined, fieldManager: "ferry", force: "true" },
          contentType: "application/apply-patch+yaml",
          body: `{"index":${i}}`,
        }),
      ),
    )) as Array<Record<string, string>>;
    expect(answers[7]).toEqual({
      method: "PATCH",
      path: "/api/v1/namespaces/shop/configmaps/settings-7?dryRun=All&fieldManager=ferry&force=true",
      authorization: "Bearer t0ken",
      contentType: "application/apply-patch+yaml",
      body: '{"index":7}',
    });
    expect(answers[8]!.path).toBe(
      "/api/v1/namespaces/shop/configmaps/settings-8?fieldManager=ferry&force=true",
    );
    expect(server.connections()).toBe(1);
  });

  it("turns an answer outside 2xx into a KubeApiError with the Status body", async () => {
    const server = await listen(http2Server(), "https");
    open.push(server);
    const transport = new KubeTransport(accessTo(server.url));
    open.push(transport);
    const failure = await transport
      .request({ method: "GET", path: "/missing" })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(KubeApiError);
    expect((failure as KubeApiError).code).toBe(404);
    expect((failure as KubeApiError).body).toMatchObject({ message: 'configmaps "web" not found' });
  });

  it("speaks HTTP/1.1 on one keep-alive socket to a server that offers no HTTP/2", async () => {
    const server = await listen(https.createServer(serverPem, http1Handler), "https");
    open.push(server);
    const transport = new KubeTransport(accessTo(server.url));
    open.push(transport);
    const answers = (await Promise.all(
      Array.from({ length: 20 }, (_, i) => transport.request({ method: "GET", path: `/api/v1/x${i}` })),
    )) as Array<Record<string, string>>;
    expect(answers.map((one) => one.path)).toEqual(Array.from({ length: 20 }, (_, i) => `/api/v1/x${i}`));
    // The refused HTTP/2 handshake, then one socket for all twenty.
    expect(server.connections()).toBe(2);
  });

  it("speaks HTTP/1.1 to a plain http:// server", async () => {
    const server = await listen(http.createServer(http1Handler), "http");
    open.push(server);
    const transport = new KubeTransport(accessTo(server.url, { ca: undefined }));
    open.push(transport);
    await Promise.all(
      Array.from({ length: 10 }, () => transport.request({ method: "GET", path: "/version" })),
    );
    expect(server.connections()).toBe(1);
  });

  it("refuses a server whose certificate its CA did not sign", async () => {
    const server = await listen(http2Server(), "https");
    open.push(server);
    const transport = new KubeTransport(accessTo(server.url, { ca: clientPem.cert }));
    open.push(transport);
    await expect(transport.request({ method: "GET", path: "/version" })).rejects.toThrow(
      /self[- ]signed|certificate/,
    );
  });

  it("presents the kubeconfig's client certificate", async () => {
    const server = await listen(http2Server({ requestCert: true, rejectUnauthorized: false }), "https");
    open.push(server);
    const transport = new KubeTransport(
      accessTo(server.url, { credentials: { cert: clientPem.cert, key: clientPem.key } }),
    );
    open.push(transport);
    const seen = (await transport.request({ method: "GET", path: "/version" })) as Record<string, string>;
    expect(seen.peer).toBe("ferry-reconciler");
    expect(seen.authorization).toBeUndefined();
  });

  it("takes a rotated client certificate on a new connection and closes the old one", async () => {
    const rotated = selfSignedCertificate(dir, "rotated", { subject: "/CN=ferry-rotated" });
    const certs = [clientPem, { key: readFileSync(rotated.keyPath), cert: readFileSync(rotated.certPath) }];
    let calls = 0;
    const server = await listen(http2Server({ requestCert: true, rejectUnauthorized: false }), "https");
    open.push(server);
    const transport = new KubeTransport({
      ...accessTo(server.url),
      credentials: async () => certs[Math.min(calls++, 1)]!,
    });
    open.push(transport);
    const first = (await transport.request({ method: "GET", path: "/version" })) as Record<string, string>;
    const second = (await transport.request({ method: "GET", path: "/version" })) as Record<string, string>;
    expect([first.peer, second.peer]).toEqual(["ferry-reconciler", "ferry-rotated"]);
    await transport.request({ method: "GET", path: "/version" });
    expect(server.connections()).toBe(2);
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 30_000;
      const check = () =>
        server.openSockets() === 1
          ? resolve()
          : Date.now() > deadline
            ? reject(new Error("the old connection stayed open"))
            : setTimeout(check, 50);
      check();
    });
  });

  it("tunnels through proxy-url with CONNECT, once for many requests", async () => {
    const server = await listen(http2Server(), "https");
    open.push(server);
    const tunnels: string[] = [];
    const proxyServer = http.createServer((_, response) => response.writeHead(405).end());
    proxyServer.on("connect", (request: http.IncomingMessage, client: net.Socket) => {
      tunnels.push(String(request.url));
      const [host, port] = String(request.url).split(":");
      const upstream = net.connect(Number(port), host, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on("error", () => client.destroy());
      client.on("error", () => upstream.destroy());
    });
    const proxy = await listen(proxyServer, "http");
    open.push(proxy);
    const transport = new KubeTransport(accessTo(server.url, { proxyUrl: proxy.url }));
    open.push(transport);
    await Promise.all(
      Array.from({ length: 10 }, () => transport.request({ method: "GET", path: "/version" })),
    );
    expect(tunnels).toEqual([new URL(server.url).host]);
    expect(server.connections()).toBe(1);
    expect(() => new KubeTransport(accessTo(server.url, { proxyUrl: "socks5://127.0.0.1:1080" }))).toThrow(
      /not an http\(s\) proxy/,
    );
  });

  it("leaves a request unanswered at its deadline for a new connection", async () => {
    const server = await listen(http2Server(), "https");
    open.push(server);
    const transport = new KubeTransport(accessTo(server.url), 2_000);
    open.push(transport);
    await transport.request({ method: "GET", path: "/version" });
    await expect(transport.request({ method: "GET", path: "/hang" })).rejects.toBeInstanceOf(
      RequestTimeoutError,
    );
    await transport.request({ method: "GET", path: "/version" });
    expect(server.connections()).toBe(2);
  });

  it("holds the deadline while connecting, to a server that never finishes the handshake", async () => {
    const silent = net.createServer(() => {});
    const server = await listen(silent, "https");
    open.push(server);
    const transport = new KubeTransport(accessTo(server.url), 2_000);
    open.push(transport);
    await expect(transport.request({ method: "GET", path: "/version" })).rejects.toBeInstanceOf(
      RequestTimeoutError,
    );
  });

  it("refuses an answer larger than its bound", async () => {
    const server = await listen(http2Server(), "https");
    open.push(server);
    const transport = new KubeTransport(accessTo(server.url), 30_000, 16 * 1024);
    open.push(transport);
    await expect(transport.request({ method: "GET", path: "/big" })).rejects.toThrow(
      /larger than 16384 bytes/,
    );
    await expect(transport.request({ method: "GET", path: "/version" })).resolves.toMatchObject({
      path: "/version",
    });
  });
});
