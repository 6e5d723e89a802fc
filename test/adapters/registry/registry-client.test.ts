import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import {
  createRegistryClient,
  RegistryAuthError,
  type RegistryClientOptions,
} from "../../../src/adapters/registry/index.js";
import type { LookupFunction } from "../../../src/adapters/registry/address-guard.js";

/**
 * Edges no local registry can show: HTTPS hosts, Docker Hub and GHCR names, realms and redirects
 * to other hosts. A scripted fetch answers by URL; every request is recorded.
 */
interface Sent {
  url: string;
  method: string;
  authorization: string | null;
}

type Route = (url: URL, init: RequestInit) => Response | Promise<Response>;

function scriptedFetch(routes: Record<string, Route>): { fetch: typeof fetch; sent: Sent[] } {
  const sent: Sent[] = [];
  const fake = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(String(input));
    sent.push({
      url: url.href,
      method: init.method ?? "GET",
      authorization: new Headers(init.headers).get("authorization"),
    });
    const key = Object.keys(routes).find((prefix) => url.href.startsWith(prefix));
    if (!key) return new Response("{}", { status: 404 });
    return routes[key]!(url, init);
  };
  return { fetch: fake as typeof fetch, sent };
}

const json = (body: unknown, init: ResponseInit = {}) =>
  new Response(JSON.stringify(body), {
    status: 200,
    ...init,
    headers: { "content-type": "application/json", ...init.headers },
  });
const challenge = (realm: string, service = "svc") =>
  new Response("", {
    status: 401,
    headers: { "www-authenticate": `Bearer realm="${realm}",service="${service}"` },
  });
const authorized = (init: RequestInit, expected: string) =>
  new Headers(init.headers).get("authorization") === expected;

function client(fetch: typeof globalThis.fetch, options: Partial<RegistryClientOptions> = {}) {
  return createRegistryClient({ fetch, sleep: async () => {}, random: () => 0.5, ...options });
}

describe("registry client addressing", () => {
  it("talks to registry-1.docker.io with library/ for Docker Hub names and trusts auth.docker.io with credentials", async () => {
    const { fetch, sent } = scriptedFetch({
      "https://registry-1.docker.io/v2/library/nginx/tags/list": (_url, init) =>
        authorized(init, "Bearer hub-token")
          ? json({ tags: ["1.27"] })
          : challenge("https://auth.docker.io/token", "registry.docker.io"),
      "https://auth.docker.io/token": () => json({ token: "hub-token" }),
    });
    const hub = client(fetch, {
      registries: { "docker.io": { username: "me", passwordEnv: "HUB" } },
      env: { HUB: "hub-password", HUB_HOSTS: "docker.io" },
    });
    expect(await hub.listTags("nginx")).toEqual(["1.27"]);
    const tokenRequest = sent.find((request) => request.url.startsWith("https://auth.docker.io/"))!;
    expect(new URL(tokenRequest.url).searchParams.get("scope")).toBe("repository:library/nginx:pull");
    expect(tokenRequest.authorization).toBe(`Basic ${Buffer.from("me:hub-password").toString("base64")}`);
  });

  it("authenticates to GHCR with the installation token from the provider", async () => {
    let asked = 0;
    const { fetch, sent } = scriptedFetch({
      "https://ghcr.io/v2/acme/shop/tags/list": (_url, init) =>
        authorized(init, "Bearer ghcr-token")
          ? json({ tags: ["1.0.0"] })
          : challenge("https://ghcr.io/token", "ghcr.io"),
      "https://ghcr.io/token": () => json({ token: "ghcr-token" }),
    });
    const ghcr = client(fetch, {
      registries: { "ghcr.io": { auth: "github" } },
      githubToken: async () => (asked++, "ghs_installation"),
    });
    expect(await ghcr.listTags("ghcr.io/acme/shop")).toEqual(["1.0.0"]);
    expect(asked).toBe(1);
    expect(sent.find((request) => request.url.startsWith("https://ghcr.io/token"))!.authorization).toBe(
      `Basic ${Buffer.from("x-access-token:ghs_installation").toString("base64")}`,
    );
  });

  it("never sends the installation token to a host other than its GitHub's registry, whatever the config says", async () => {
    let asked = 0;
    const { fetch, sent } = scriptedFetch({
      "https://evil.example/v2/": () =>
        new Response("", { status: 401, headers: { "www-authenticate": 'Basic realm="r"' } }),
      "https://ghcr.io/v2/": () =>
        new Response("", {
          status: 401,
          headers: { "www-authenticate": 'Bearer realm="https://evil.example/token"' },
        }),
      "http://ghcr.io/v2/": () =>
        new Response("", { status: 401, headers: { "www-authenticate": 'Basic realm="r"' } }),
    });
    const token = async () => (asked++, "ghs_installation");
    // Configs that the config check refuses, reaching the client anyway.
    const foreign = client(fetch, { registries: { "evil.example": { auth: "github" } }, githubToken: token });
    await expect(foreign.listTags("evil.example/acme/shop")).rejects.toThrow(
      /allowed only for https:\/\/ghcr.io/,
    );
    const plain = client(fetch, {
      registries: { "ghcr.io": { auth: "github", insecure: true } },
      githubToken: token,
    });
    await expect(plain.listTags("ghcr.io/acme/shop")).rejects.toThrow(/allowed only for https:\/\/ghcr.io/);
    // GHCR itself announcing a realm on another host, even one the operator trusts for other credentials.
    const realm = client(fetch, {
      registries: { "ghcr.io": { auth: "github" } },
      githubToken: token,
      trustedRealmHosts: { "ghcr.io": ["evil.example"] },
    });
    await realm.listTags("ghcr.io/acme/shop").catch(() => undefined);
    expect(asked).toBeLessThanOrEqual(1);
    expect(
      sent.filter((request) => request.authorization !== null && !request.url.startsWith("https://ghcr.io/")),
    ).toEqual([]);
  });

  it("speaks HTTPS to other registries, plain HTTP to loopback and to registries marked insecure", async () => {
    const { fetch, sent } = scriptedFetch({ http: () => json({ tags: [] }) });
    const any = client(fetch, { registries: { "registry.internal:5000": { insecure: true } } });
    await any.listTags("registry.example.com/a");
    await any.listTags("localhost:5000/a");
    await any.listTags("registry.internal:5000/a");
    expect(sent.map((request) => new URL(request.url).origin)).toEqual([
      "https://registry.example.com",
      "http://localhost:5000",
      "http://registry.internal:5000",
    ]);
  });
});

describe("registry client address guard (docs/reliability.md row 16)", () => {
  it("refuses a registry at a link-local address (cloud metadata) without sending anything", async () => {
    const { fetch, sent } = scriptedFetch({});
    await expect(client(fetch).listTags("169.254.169.254/latest/meta")).rejects.toThrow(/link-local/);
    expect(sent).toEqual([]);
  });

  it("refuses loopback and private registries when asked to (production), and allows them otherwise (sandbox, on-prem)", async () => {
    const { fetch, sent } = scriptedFetch({
      "http://127.0.0.1:5000/v2/acme/shop/tags/list": () => json({ name: "acme/shop", tags: ["1.0.0"] }),
    });
    await expect(
      client(fetch, { refusePrivateRegistries: true }).listTags("127.0.0.1:5000/acme/shop"),
    ).rejects.toThrow(/private or loopback/);
    await expect(
      client(fetch, { refusePrivateRegistries: true }).listTags("10.1.2.3:5000/acme/shop"),
    ).rejects.toThrow(/private or loopback/);
    expect(sent).toEqual([]);
    expect(await client(fetch).listTags("127.0.0.1:5000/acme/shop")).toEqual(["1.0.0"]);
  });
});

describe("registry client credentials", () => {
  it("withholds credentials from a token realm on another host that is not trusted", async () => {
    const { fetch, sent } = scriptedFetch({
      "https://registry.example.com/v2/": (_url, init) =>
        authorized(init, "Bearer t") ? json({ tags: [] }) : challenge("https://evil.example/token"),
      "https://evil.example/token": () => json({ token: "t" }),
    });
    const reader = client(fetch, {
      registries: { "registry.example.com": { username: "u", passwordEnv: "P" } },
      env: { P: "password-canary", P_HOSTS: "registry.example.com" },
    });
    await reader.listTags("registry.example.com/a");
    expect(sent.find((request) => request.url.startsWith("https://evil.example"))!.authorization).toBeNull();
  });

  it("sends credentials to a realm host the operator trusts", async () => {
    const { fetch, sent } = scriptedFetch({
      "https://registry.example.com/v2/": (_url, init) =>
        authorized(init, "Bearer t") ? json({ tags: [] }) : challenge("https://auth.example.com/token"),
      "https://auth.example.com/token": () => json({ token: "t" }),
    });
    const reader = client(fetch, {
      registries: { "registry.example.com": { username: "u", passwordEnv: "P" } },
      env: { P: "pw", P_HOSTS: "registry.example.com,auth.example.com" },
      trustedRealmHosts: { "registry.example.com": ["auth.example.com"] },
    });
    await reader.listTags("registry.example.com/a");
    expect(sent.find((request) => request.url.startsWith("https://auth.example.com"))!.authorization).toMatch(
      /^Basic /,
    );
  });

  it("withholds a secret from a realm the operator trusts when the secret's binding does not name it", async () => {
    const { fetch, sent } = scriptedFetch({
      "https://registry.example.com/v2/": (_url, init) =>
        authorized(init, "Bearer t") ? json({ tags: [] }) : challenge("https://auth.example.com/token"),
      "https://auth.example.com/token": () => json({ token: "t" }),
    });
    const reader = client(fetch, {
      registries: { "registry.example.com": { username: "u", passwordEnv: "P" } },
      env: { P: "pw", P_HOSTS: "registry.example.com" },
      trustedRealmHosts: { "registry.example.com": ["auth.example.com"] },
    });
    await reader.listTags("registry.example.com/a");
    expect(
      sent.find((request) => request.url.startsWith("https://auth.example.com"))!.authorization,
    ).toBeNull();
  });

  it("never reads a secret for a registry or an installation outside its binding, whatever the config says", async () => {
    const basicChallenge = () =>
      new Response("", { status: 401, headers: { "www-authenticate": 'Basic realm="r"' } });
    const { fetch, sent } = scriptedFetch({
      "https://evil.example/v2/": basicChallenge,
      "https://registry.example.com/v2/": basicChallenge,
    });
    const env = { P: "bound-password-canary", P_HOSTS: "registry.example.com", P_OWNERS: "acme" };
    const refusal = (options: Partial<RegistryClientOptions>, repository: string): Promise<unknown> =>
      client(fetch, { env, ...options })
        .listTags(repository)
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
    const bound = "P is bound to registry.example.com, not evil.example";
    const foreignHost = await refusal(
      { registries: { "evil.example": { username: "u", passwordEnv: "P" } } },
      "evil.example/a",
    );
    expect(foreignHost).toBeInstanceOf(RegistryAuthError);
    expect(foreignHost).toMatchObject({ message: expect.stringContaining(bound) });
    expect(
      await refusal({ registries: { "evil.example": { auth: "bearer", tokenEnv: "P" } } }, "evil.example/a"),
    ).toMatchObject({ message: expect.stringContaining(bound) });
    expect(
      await refusal(
        {
          registries: { "registry.example.com": { username: "u", passwordEnv: "P" } },
          secretOwner: "globex",
        },
        "registry.example.com/a",
      ),
    ).toMatchObject({ message: expect.stringContaining("P is not available to installation globex") });
    expect(sent.filter((request) => request.authorization !== null)).toEqual([]);
  });

  it("refuses a realm that downgrades HTTPS to plain HTTP without contacting it", async () => {
    const { fetch, sent } = scriptedFetch({
      "https://registry.example.com/v2/": () => challenge("http://registry.example.com/token"),
    });
    await expect(client(fetch).listTags("registry.example.com/a")).rejects.toMatchObject({
      code: "registry-realm-refused",
    });
    expect(sent.some((request) => request.url.startsWith("http://"))).toBe(false);
  });

  it("refuses a realm pointing at the cloud metadata address", async () => {
    const { fetch, sent } = scriptedFetch({
      "https://registry.example.com/v2/": () => challenge("https://169.254.169.254/latest/meta-data"),
    });
    await expect(client(fetch).listTags("registry.example.com/a")).rejects.toMatchObject({
      code: "registry-realm-refused",
    });
    expect(sent.some((request) => request.url.includes("169.254"))).toBe(false);
  });

  it("names the missing password variable without guessing a value", async () => {
    const { fetch } = scriptedFetch({
      "https://registry.example.com/v2/": () =>
        new Response("", { status: 401, headers: { "www-authenticate": 'Basic realm="r"' } }),
    });
    const error = await client(fetch, {
      registries: { "registry.example.com": { username: "u", passwordEnv: "REGISTRY_PASSWORD" } },
      env: { REGISTRY_PASSWORD_HOSTS: "registry.example.com" },
    })
      .listTags("registry.example.com/a")
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RegistryAuthError);
    expect((error as Error).message).toContain("REGISTRY_PASSWORD");
  });

  it("redacts a password the registry echoes back in an error body", async () => {
    const { fetch } = scriptedFetch({
      "https://registry.example.com/v2/": (_url, init) =>
        authorized(init, `Basic ${Buffer.from("u:hunter2-canary").toString("base64")}`)
          ? json({ errors: [{ code: "DENIED", message: "bad password hunter2-canary" }] }, { status: 400 })
          : new Response("", { status: 401, headers: { "www-authenticate": 'Basic realm="r"' } }),
    });
    const error = await client(fetch, {
      registries: { "registry.example.com": { username: "u", passwordEnv: "P" } },
      env: { P: "hunter2-canary", P_HOSTS: "registry.example.com" },
    })
      .listTags("registry.example.com/a")
      .catch((caught: unknown) => caught as Error);
    expect((error as Error).message).toContain("DENIED");
    expect((error as Error).message).not.toContain("hunter2-canary");
  });

  it("reuses one token per scope across requests", async () => {
    const { fetch, sent } = scriptedFetch({
      "https://registry.example.com/v2/": (_url, init) =>
        authorized(init, "Bearer t")
          ? json({ tags: ["1"] })
          : challenge("https://registry.example.com/token"),
      "https://registry.example.com/token": () => json({ token: "t", expires_in: 300 }),
    });
    const reader = client(fetch, { limits: { tagCacheTtlMs: 0 } });
    await reader.listTags("registry.example.com/a");
    await reader.listTags("registry.example.com/a");
    expect(sent.filter((request) => request.url.includes("/token")).length).toBe(1);
    // a new scope gets its token before its first request: no 401 round trip
    await reader.listTags("registry.example.com/b");
    expect(sent.filter((request) => request.url.includes("/v2/b/")).length).toBe(1);
  });
});

describe("registry client redirects and links", () => {
  const config = {
    schemaVersion: 2,
    created: "2025-01-01T00:00:00Z",
    os: "linux",
    architecture: "arm64",
    config: { Labels: {} },
  };
  const configBytes = JSON.stringify(config);
  const configDigest = `sha256:${createHash("sha256").update(configBytes).digest("hex")}`;
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { digest: configDigest, size: configBytes.length },
    layers: [],
  });
  const manifestRoute = () =>
    new Response(manifest, { headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } });

  it("follows a blob redirect to storage on another host without the registry's credentials", async () => {
    const { fetch, sent } = scriptedFetch({
      "https://registry.example.com/v2/a/manifests/": manifestRoute,
      "https://registry.example.com/v2/a/blobs/": () =>
        new Response("", { status: 307, headers: { location: "https://storage.example.net/blob?sig=1" } }),
      "https://storage.example.net/": () => new Response(configBytes),
    });
    const reader = client(fetch, {
      registries: { "registry.example.com": { auth: "bearer", tokenEnv: "TOKEN" } },
      env: { TOKEN: "static-token", TOKEN_HOSTS: "registry.example.com" },
    });
    expect((await reader.describe("registry.example.com/a", "1")).platforms).toEqual(["linux/arm64"]);
    expect(
      sent.find((request) => request.url.startsWith("https://storage.example.net"))!.authorization,
    ).toBeNull();
    expect(sent.find((request) => request.url.includes("/blobs/"))!.authorization).toBe(
      "Bearer static-token",
    );
  });

  it("refuses a redirect from HTTPS to plain HTTP", async () => {
    const { fetch, sent } = scriptedFetch({
      "https://registry.example.com/v2/a/manifests/": manifestRoute,
      "https://registry.example.com/v2/a/blobs/": () =>
        new Response("", { status: 302, headers: { location: "http://storage.example.net/blob" } }),
    });
    await expect(client(fetch).describe("registry.example.com/a", "1")).rejects.toMatchObject({
      code: "registry-redirect-refused",
    });
    expect(sent.some((request) => request.url.startsWith("http://"))).toBe(false);
  });

  it("caps the number of redirects", async () => {
    let hops = 0;
    const { fetch } = scriptedFetch({
      "https://registry.example.com/": () =>
        new Response("", { status: 302, headers: { location: `/v2/a/tags/list?hop=${hops++}` } }),
    });
    await expect(
      client(fetch, { limits: { maxRedirects: 2 } }).listTags("registry.example.com/a"),
    ).rejects.toMatchObject({ code: "registry-too-many-redirects" });
    expect(hops).toBe(3);
  });

  it("refuses a next-page link to another host", async () => {
    const { fetch } = scriptedFetch({
      "https://registry.example.com/": () =>
        json(
          { tags: ["1"] },
          { headers: { link: '<https://elsewhere.example/v2/a/tags/list?last=1>; rel="next"' } },
        ),
    });
    await expect(client(fetch).listTags("registry.example.com/a")).rejects.toMatchObject({
      code: "registry-link-refused",
    });
  });

  it("falls back to GET and hashes the body when HEAD carries no digest", async () => {
    const { fetch } = scriptedFetch({
      "https://registry.example.com/v2/a/manifests/": (_url, init) =>
        init.method === "HEAD"
          ? new Response(null, { headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" } })
          : manifestRoute(),
    });
    expect(await client(fetch).resolveDigest("registry.example.com/a", "1")).toBe(
      `sha256:${createHash("sha256").update(manifest).digest("hex")}`,
    );
  });

  it("leaves attestation entries (unknown/unknown) out of an index's platforms", async () => {
    const index = JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [
        {
          digest: `sha256:${createHash("sha256").update(manifest).digest("hex")}`,
          platform: { os: "linux", architecture: "arm64" },
        },
        { digest: `sha256:${"a".repeat(64)}`, platform: { os: "unknown", architecture: "unknown" } },
      ],
    });
    const { fetch } = scriptedFetch({
      "https://registry.example.com/v2/a/manifests/sha256": manifestRoute,
      "https://registry.example.com/v2/a/manifests/": () =>
        new Response(index, { headers: { "content-type": "application/vnd.oci.image.index.v1+json" } }),
      "https://registry.example.com/v2/a/blobs/": () => new Response(configBytes),
    });
    expect((await client(fetch).describe("registry.example.com/a", "1")).platforms).toEqual(["linux/arm64"]);
  });
});

describe("registry client limits", () => {
  it("never has more requests in flight to one registry than its concurrency", async () => {
    let inFlight = 0;
    let peak = 0;
    const { fetch } = scriptedFetch({
      "https://registry.example.com/": async () => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        return json({ tags: [] });
      },
    });
    const reader = client(fetch, { registries: { "registry.example.com": { concurrency: 2 } } });
    await Promise.all(
      ["a", "b", "c", "d", "e"].map((name) => reader.listTags(`registry.example.com/${name}`)),
    );
    expect(peak).toBe(2);
  });

  it("fails with a transient error when the per-minute budget is spent and the wait is too long", async () => {
    const { fetch } = scriptedFetch({ "https://registry.example.com/": () => json({ tags: [] }) });
    const reader = client(fetch, {
      registries: { "registry.example.com": { requestsPerMinute: 2 } },
      now: () => 0,
      limits: { maxBudgetWaitMs: 1_000 },
    });
    await reader.listTags("registry.example.com/a");
    await reader.listTags("registry.example.com/b");
    await expect(reader.listTags("registry.example.com/c")).rejects.toMatchObject({
      code: "registry-budget-exhausted",
      retryAfterMs: 60_000,
    });
    expect(reader.requestCounts()).toEqual({ "registry.example.com": 2 });
  });
});

describe("registry client address guard on every connection (after DNS, redirects and realms)", () => {
  /** A loopback registry: tags at /v2/ok, a redirect at /v2/moved, a Bearer challenge at /v2/realm. */
  async function startLoopbackRegistry(redirectTo: () => string, realm: () => string) {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.headers.host}${req.url}`);
      if (req.url?.startsWith("/v2/ok/")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ name: "ok", tags: ["1.0.0"] }));
      } else if (req.url?.startsWith("/v2/moved/")) {
        res.writeHead(307, { location: redirectTo() });
        res.end();
      } else {
        res.writeHead(401, { "www-authenticate": `Bearer realm="${realm()}",service="svc"` });
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    return { port, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  /** DNS as a table: names the test chooses resolve to the addresses it chooses. */
  function mappedLookup(table: Record<string, string>, asked: string[]): LookupFunction {
    return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
      asked.push(hostname);
      const address = table[hostname];
      if (!address) return callback(Object.assign(new Error(`no ${hostname}`), { code: "ENOTFOUND" }));
      const family = address.includes(":") ? 6 : 4;
      if (options.all) callback(null, [{ address, family }]);
      else callback(null, address, family);
    }) as unknown as LookupFunction;
  }

  it("connects where DNS says, and refuses names that resolve to link-local addresses in any form, also as a redirect target or a token realm", async () => {
    let port = 0;
    const registry = await startLoopbackRegistry(
      () => `http://inside.test:${port}/v2/ok/tags/list`,
      () => `http://metadata.test:${port}/token`,
    );
    port = registry.port;
    const asked: string[] = [];
    const lookup = mappedLookup(
      {
        "registry.test": "127.0.0.1",
        "metadata.test": "169.254.169.254",
        "inside.test": "::ffff:169.254.169.254",
        "nat64.test": "64:ff9b::a9fe:a9fe",
      },
      asked,
    );
    const host = `registry.test:${port}`;
    const reader = createRegistryClient({
      lookup,
      registries: { [host]: { insecure: true } },
      sleep: async () => {},
      random: () => 0.5,
    });
    try {
      expect(await reader.listTags(`${host}/ok`)).toEqual(["1.0.0"]);
      for (const repository of [`${host}/moved`, `${host}/realm`, `nat64.test:${port}/ok`]) {
        const insecure = createRegistryClient({
          lookup,
          registries: { [repository.split("/")[0]!]: { insecure: true } },
          sleep: async () => {},
        });
        await expect(insecure.listTags(repository)).rejects.toMatchObject({
          code: "registry-address-refused",
        });
      }
      expect(asked).toEqual(expect.arrayContaining(["inside.test", "metadata.test", "nat64.test"]));
      // Nothing reached the listener through a refused name.
      expect(registry.seen.filter((request) => !request.startsWith("registry.test"))).toEqual([]);
      // In production, a name that resolves to loopback is refused too.
      const production = createRegistryClient({
        lookup,
        refusePrivateRegistries: true,
        registries: { [host]: { insecure: true } },
        sleep: async () => {},
      });
      await expect(production.listTags(`${host}/ok`)).rejects.toMatchObject({
        code: "registry-address-refused",
      });
    } finally {
      await registry.close();
    }
  });

  it("refuses metadata outside 169.254/16 (Azure, Alibaba) and IPv6 forms carrying it, as a name's address, with private registries allowed", async () => {
    const table = {
      "azure.test": "168.63.129.16",
      "alibaba.test": "100.100.100.200",
      "translated.test": "::ffff:0:a9fe:a9fe",
      "local-nat64.test": "64:ff9b:1::a9fe:a9fe",
      "teredo.test": "2001:0:4136:e378:8000:63bf:5601:5601",
    };
    const asked: string[] = [];
    const reader = createRegistryClient({
      lookup: mappedLookup(table, asked),
      refusePrivateRegistries: false,
      registries: Object.fromEntries(Object.keys(table).map((name) => [name, { insecure: true }])),
      sleep: async () => {},
    });
    for (const name of Object.keys(table))
      await expect(reader.listTags(`${name}/latest/meta`)).rejects.toMatchObject({
        code: "registry-address-refused",
        message: expect.stringContaining(`${name} resolves to`),
      });
    expect(asked).toEqual(expect.arrayContaining(Object.keys(table)));
  });

  it("refuses metadata outside 169.254/16 and its IPv6 forms as a registry, a redirect or a realm without sending anything", async () => {
    const { fetch, sent } = scriptedFetch({
      "https://registry.example.com/v2/moved/": () =>
        new Response("", { status: 302, headers: { location: "http://168.63.129.16/machine" } }),
      "https://registry.example.com/v2/moved-v6/": () =>
        new Response("", { status: 302, headers: { location: "http://[64:ff9b:1::a9fe:a9fe]/latest" } }),
      "https://registry.example.com/v2/realm/": () => challenge("https://100.100.100.200/latest/meta-data"),
      "https://registry.example.com/v2/realm-v6/": () => challenge("https://[::ffff:0:a9fe:a9fe]/token"),
    });
    for (const host of ["168.63.129.16", "100.100.100.200", "[::ffff:0:a9fe:a9fe]", "[64:ff9b:1::a9fe:a9fe]"])
      await expect(client(fetch).listTags(`${host}/latest/meta`)).rejects.toThrow(/link-local/);
    for (const repository of ["moved", "moved-v6"])
      await expect(client(fetch).listTags(`registry.example.com/${repository}`)).rejects.toMatchObject({
        code: "registry-redirect-refused",
      });
    for (const repository of ["realm", "realm-v6"])
      await expect(client(fetch).listTags(`registry.example.com/${repository}`)).rejects.toMatchObject({
        code: "registry-realm-refused",
      });
    expect(sent.map((request) => new URL(request.url).hostname)).toEqual(
      Array(4).fill("registry.example.com"),
    );
  });

  it("refuses every spelling of the metadata address as a registry, a redirect or a realm without sending anything", async () => {
    const { fetch, sent } = scriptedFetch({
      "https://registry.example.com/v2/moved/": () =>
        new Response("", {
          status: 302,
          headers: { location: "http://[::ffff:a9fe:a9fe]/latest/meta-data" },
        }),
      "https://registry.example.com/v2/realm/": () => challenge("https://[::ffff:169.254.169.254]/token"),
    });
    for (const host of ["[::ffff:169.254.169.254]", "0xa9.0xfe.0xa9.0xfe", "2852039166:443", "[fe80::1]"])
      await expect(client(fetch).listTags(`${host}/latest/meta`)).rejects.toThrow(/link-local/);
    await expect(client(fetch).listTags("registry.example.com/moved")).rejects.toMatchObject({
      code: "registry-redirect-refused",
    });
    await expect(client(fetch).listTags("registry.example.com/realm")).rejects.toMatchObject({
      code: "registry-realm-refused",
    });
    expect(sent.map((request) => new URL(request.url).hostname)).toEqual([
      "registry.example.com",
      "registry.example.com",
    ]);
  });
});
