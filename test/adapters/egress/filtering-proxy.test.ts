/**
 * The render proxy through a real HTTP client: what it admits, and that a refused request or
 * tunnel never reaches the loopback server behind it.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startFilteringProxy, type FilteringProxy } from "../../../src/adapters/egress/filtering-proxy.js";
import { fetchThroughProxy } from "../../../src/adapters/egress/proxied-fetch.js";

let proxy: FilteringProxy | undefined;
const servers: Server[] = [];

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function serve(handler: (url: string) => { status: number; headers?: Record<string, string> }) {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? "");
    const answer = handler(req.url ?? "");
    res.writeHead(answer.status, answer.headers).end("body\n");
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { port: (server.address() as AddressInfo).port, hits };
}

/** A plain-HTTP request through the proxy (absolute form): status and Location. */
function get(target: string): Promise<{ status: number; location?: string; body: string }> {
  const via = new URL(proxy!.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: via.hostname, port: via.port, path: target, method: "GET" }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          body,
          ...(res.headers.location ? { location: res.headers.location } : {}),
        }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}

function tunnel(target: string): Promise<number> {
  const via = new URL(proxy!.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: via.hostname, port: via.port, method: "CONNECT", path: target });
    req.on("connect", (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the filtering render proxy", () => {
  it("with no prefix allowed, refuses every request and tunnel and says what it refused", async () => {
    const server = await serve(() => ({ status: 200 }));
    proxy = await startFilteringProxy({ allowedPrefixes: [], allowPrivateAddressesForTests: true });
    expect((await get(`http://127.0.0.1:${server.port}/x.yaml`)).status).toBe(403);
    expect(await tunnel(`127.0.0.1:${server.port}`)).toBe(403);
    expect(server.hits).toEqual([]);
    expect(proxy.refusals().join("\n")).toMatch(
      /GET http:\/\/127\.0\.0\.1:\d+\/x\.yaml: .*not under an --allow-remote-base/,
    );
  });

  it("refuses an allowed prefix at a loopback address: the address guard, whatever the spelling", async () => {
    const server = await serve(() => ({ status: 200 }));
    const spellings = ["127.0.0.1", "127.1", "2130706433", "[::ffff:127.0.0.1]", "localhost", "localhost."];
    proxy = await startFilteringProxy({
      allowedPrefixes: spellings.flatMap((host) => [
        `http://${host}:${server.port}/`,
        `https://${host}:${server.port}/`,
      ]),
    });
    for (const host of spellings) {
      expect((await get(`http://${host}:${server.port}/x.yaml`)).status, host).toBeGreaterThanOrEqual(403);
      expect(await tunnel(`${host}:${server.port}`), host).toBeGreaterThanOrEqual(403);
    }
    expect(server.hits).toEqual([]);
    expect(proxy.refusals().join("\n")).toMatch(/loopback/);
  });

  it("admits an allowed prefix (loopback only by the test switch), and checks where a redirect leads anew", async () => {
    const elsewhere = await serve(() => ({ status: 200 }));
    const allowed = await serve((url) =>
      url === "/bases/moved.yaml"
        ? { status: 302, headers: { location: `http://127.0.0.1:${elsewhere.port}/x.yaml` } }
        : { status: 200 },
    );
    proxy = await startFilteringProxy({
      allowedPrefixes: [`http://127.0.0.1:${allowed.port}/bases/`],
      allowPrivateAddressesForTests: true,
    });
    expect(await get(`http://127.0.0.1:${allowed.port}/bases/x.yaml`)).toMatchObject({
      status: 200,
      body: "body\n",
    });
    expect((await get(`http://127.0.0.1:${allowed.port}/other/x.yaml`)).status).toBe(403);
    const redirected = await get(`http://127.0.0.1:${allowed.port}/bases/moved.yaml`);
    expect(redirected.status).toBe(302);
    expect((await get(redirected.location!)).status).toBe(403);
    expect(allowed.hits).toEqual(["/bases/x.yaml", "/bases/moved.yaml"]);
    expect(elsewhere.hits).toEqual([]);
  });
});

describe("the proxy's byte budget", () => {
  it("cuts what an upstream sends past maxBytes and says so, through Ferry's own proxied fetch", async () => {
    const big = createServer((_req, res) => res.writeHead(200).end("x".repeat(64 * 1024)));
    servers.push(big);
    await new Promise<void>((resolve) => big.listen(0, "127.0.0.1", resolve));
    const port = (big.address() as AddressInfo).port;
    const prefix = `http://127.1:${port}/`;
    proxy = await startFilteringProxy({
      allowedPrefixes: [prefix],
      allowPrivateAddressesForTests: true,
      maxBytes: 1024,
    });
    await expect(
      fetchThroughProxy(proxy.url, `${prefix}big.yaml`, {
        maxBytes: 1024 * 1024,
        timeoutMs: 30_000,
        maxRedirects: 0,
      }),
    ).rejects.toThrow();
    expect(proxy.refusals().join("\n")).toMatch(/more than 1024 bytes fetched/);
  });
});
