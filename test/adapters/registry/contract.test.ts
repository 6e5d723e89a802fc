import { createHash } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createRegistryClient,
  RegistryAuthError,
  RegistryNotFoundError,
  RegistryUnavailableError,
  type RegistryClientOptions,
  type RegistryLimits,
} from "../../../src/adapters/registry/index.js";
import { pushImage } from "../../../packages/sandbox/src/registry/push-image.js";
import { distributionMissingMessage } from "../../support/registry-distribution.js";
import { startFaultProxy, type FaultProxy } from "../../support/registry-fault-proxy.js";
import { registryTargets, type StartedRegistry } from "../../support/registry-targets.js";

/**
 * The registry client against real registries: CNCF distribution (anonymous, htpasswd, token
 * auth) and the embedded sandbox registry, each behind a paginating, fault-injecting proxy.
 * docs/reliability.md rows 16–20 and 25.
 */

describe("the registry contract suite's prerequisites", () => {
  it("has CNCF distribution installed (docker-registry)", () => {
    // Never skip silently: a machine without the binary fails here with the install hint.
    expect(distributionMissingMessage(), distributionMissingMessage()).toBeUndefined();
  });
});

const PASSWORD_ENV = "FERRY_TEST_REGISTRY_PASSWORD";
const SHOP = "acme/shop";
const MULTI = "acme/multi";
const SHOP_TAGS = ["1.0.0", "1.1.0", "1.2.0", "2.0.0-rc.1", "latest"];
const CREATED = new Date("2025-03-04T05:06:07Z");
const REVISION = "0123456789abcdef0123456789abcdef01234567";

const targets = distributionMissingMessage() ? [] : registryTargets();

describe.each(targets)("registry client against $name", (target) => {
  let registry: StartedRegistry;
  let proxy: FaultProxy;
  let clock: number;
  let sleeps: number[];
  const pushed: Record<string, string> = {};
  let multiPlatforms: string[] = [];

  beforeAll(async () => {
    registry = await target.start();
    proxy = await startFaultProxy(registry.url);
    for (const tag of SHOP_TAGS) {
      const result = await pushImage(registry.url, SHOP, tag, {
        auth: registry.credentials,
        created: CREATED,
        content: tag,
        labels: { "org.opencontainers.image.revision": REVISION, "org.opencontainers.image.version": tag },
      });
      pushed[tag] = result.digest;
    }
    multiPlatforms = ["linux/amd64", "linux/arm64/v8", "linux/s390x"];
    const multi = await pushImage(registry.url, MULTI, "1.0.0", {
      auth: registry.credentials,
      platforms: multiPlatforms,
      created: CREATED,
    });
    pushed.multi = multi.digest;
  });

  afterAll(async () => {
    await proxy?.close();
    await registry?.close();
  });

  beforeEach(() => {
    proxy.reset();
    clock = Date.parse("2026-01-01T00:00:00Z");
    sleeps = [];
  });

  function client(
    overrides: {
      limits?: Partial<RegistryLimits>;
      password?: string;
      anonymous?: boolean;
      trustRealm?: boolean;
    } = {},
  ) {
    const options: RegistryClientOptions = {
      registries:
        registry.credentials && !overrides.anonymous
          ? Object.fromEntries(
              [proxy.host, registry.host].map((host) => [
                host,
                { username: registry.credentials!.username, passwordEnv: PASSWORD_ENV },
              ]),
            )
          : {},
      env: { [PASSWORD_ENV]: overrides.password ?? registry.credentials?.password, ...passwordBinding() },
      now: () => clock,
      sleep: async (ms) => {
        sleeps.push(ms);
        clock += ms;
      },
      random: () => 0.5,
      limits: { requestTimeoutMs: 2_000, ...overrides.limits },
    };
    if (registry.realmHost && overrides.trustRealm !== false)
      options.trustedRealmHosts = {
        [proxy.host]: [registry.realmHost],
        [registry.host]: [registry.realmHost],
      };
    return createRegistryClient(options);
  }
  /** The operator's binding of the password: the registry, the proxy in front of it and its token realm. */
  const passwordBinding = () => ({
    [`${PASSWORD_ENV}_HOSTS`]: [proxy.host, registry.host, registry.realmHost].filter(Boolean).join(","),
  });
  const shop = () => `${proxy.host}/${SHOP}`;
  const tagListRequests = () =>
    proxy.requests.filter(
      (request) =>
        request.path.endsWith("/tags/list") && request.authorized === (registry.credentials !== undefined),
    ).length;

  describe("tags", () => {
    it("lists every tag of a repository", async () => {
      expect((await client().listTags(shop())).sort()).toEqual([...SHOP_TAGS].sort());
    });

    it("follows relative next links across pages to the complete list", async () => {
      proxy.paginate({ pageSize: 2, link: "relative" });
      expect((await client().listTags(shop())).sort()).toEqual([...SHOP_TAGS].sort());
      expect(tagListRequests()).toBe(3);
    });

    it("follows absolute next links", async () => {
      proxy.paginate({ pageSize: 2, link: "absolute" });
      expect((await client().listTags(shop())).sort()).toEqual([...SHOP_TAGS].sort());
    });

    it("keeps walking after a short page that carries a next link", async () => {
      proxy.paginate({ pageSize: 3, shortFirstPage: true });
      expect((await client().listTags(shop())).sort()).toEqual([...SHOP_TAGS].sort());
      expect(tagListRequests()).toBe(3);
    });

    it("fails with a pagination-loop error when the next link repeats a page", async () => {
      proxy.paginate({ pageSize: 2, loop: true });
      await expect(client().listTags(shop())).rejects.toMatchObject({ code: "registry-pagination-loop" });
    });

    it("lists 200,000 tags completely", async () => {
      const many = Array.from(
        { length: 200_000 },
        (_, index) => `1.${Math.floor(index / 1000)}.${index % 1000}`,
      );
      proxy.overrideTags(SHOP, many);
      proxy.paginate({ pageSize: 10_000 });
      const tags = await client({ limits: { pageSize: 10_000 } }).listTags(shop());
      expect(tags).toHaveLength(200_000);
      expect(new Set(tags)).toEqual(new Set(many));
    });

    it("refuses a tag list over the cap instead of returning a truncated one", async () => {
      proxy.overrideTags(
        SHOP,
        Array.from({ length: 1_001 }, (_, index) => `t${index}`),
      );
      proxy.paginate({ pageSize: 400 });
      await expect(client({ limits: { maxTags: 1_000 } }).listTags(shop())).rejects.toMatchObject({
        code: "registry-too-many-tags",
      });
    });

    it("stops at the page cap", async () => {
      proxy.paginate({ pageSize: 1 });
      await expect(client({ limits: { maxPages: 3 } }).listTags(shop())).rejects.toMatchObject({
        code: "registry-too-many-pages",
      });
    });

    it("reports a repository that does not exist as not found", async () => {
      await expect(client().listTags(`${proxy.host}/acme/nothing-here`)).rejects.toBeInstanceOf(
        RegistryNotFoundError,
      );
    });

    it("shares one tag walk between environments watching the same repository until invalidated", async () => {
      const shared = client();
      await Promise.all([shared.listTags(shop()), shared.listTags(shop()), shared.listTags(shop())]);
      await shared.listTags(shop());
      expect(tagListRequests()).toBe(1);
      shared.invalidate(shop());
      await shared.listTags(shop());
      expect(tagListRequests()).toBe(2);
    });

    it("walks again once the tag cache TTL has passed", async () => {
      const shared = client({ limits: { tagCacheTtlMs: 1_000 } });
      await shared.listTags(shop());
      clock += 1_001;
      await shared.listTags(shop());
      expect(tagListRequests()).toBe(2);
    });
  });

  describe("manifests", () => {
    it("resolves a tag to the digest that was pushed, with HEAD", async () => {
      expect(await client().resolveDigest(shop(), "1.1.0")).toBe(pushed["1.1.0"]);
      expect(
        proxy.requests.some((request) => request.method === "GET" && request.path.includes("/manifests/")),
      ).toBe(false);
    });

    it("describes a single-platform image: digest, platform, created and revision label", async () => {
      const description = await client().describe(shop(), "1.2.0");
      expect(description).toMatchObject({
        digest: pushed["1.2.0"],
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        platforms: ["linux/amd64"],
        revision: REVISION,
        labels: { "org.opencontainers.image.version": "1.2.0" },
      });
      expect(description.created?.toISOString()).toBe(CREATED.toISOString());
    });

    it("describes a multi-arch index with every platform", async () => {
      const description = await client().describe(`${proxy.host}/${MULTI}`, "1.0.0");
      expect(description.digest).toBe(pushed.multi);
      expect(description.mediaType).toBe("application/vnd.oci.image.index.v1+json");
      expect(description.platforms.sort()).toEqual([...multiPlatforms].sort());
      expect(description.created?.toISOString()).toBe(CREATED.toISOString());
    });

    it("describes an image by digest", async () => {
      expect((await client().describe(shop(), pushed["1.0.0"]!)).digest).toBe(pushed["1.0.0"]);
    });

    it("sends all four manifest media types in Accept", async () => {
      // Without them distribution may answer a schema1 manifest with another digest.
      const seen: string[] = [];
      const recording = createRegistryClient({
        ...(registry.credentials
          ? {
              registries: {
                [proxy.host]: { username: registry.credentials.username, passwordEnv: PASSWORD_ENV },
              },
            }
          : {}),
        env: { [PASSWORD_ENV]: registry.credentials?.password, ...passwordBinding() },
        ...(registry.realmHost ? { trustedRealmHosts: { [proxy.host]: [registry.realmHost] } } : {}),
        fetch: async (input, init) => {
          const accept = new Headers(init?.headers).get("accept");
          if (String(input).includes("/manifests/") && accept) seen.push(accept);
          return fetch(input, init);
        },
      });
      await recording.describe(shop(), "1.0.0");
      for (const mediaType of [
        "application/vnd.oci.image.index.v1+json",
        "application/vnd.oci.image.manifest.v1+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
        "application/vnd.docker.distribution.manifest.v2+json",
      ]) {
        expect(seen.at(-1)).toContain(mediaType);
      }
    });

    it("sees a tag that moved to a new digest, re-reading a known tag with HEAD", async () => {
      const reader = client();
      // its own repository, so that the tag lists other tests expect stay as pushed
      const moving = `${proxy.host}/acme/moving`;
      const first = await pushImage(registry.url, "acme/moving", "moving", {
        auth: registry.credentials,
        content: "first",
      });
      expect((await reader.describe(moving, "moving")).digest).toBe(first.digest);
      const second = await pushImage(registry.url, "acme/moving", "moving", {
        auth: registry.credentials,
        content: "second",
      });
      proxy.requests.length = 0;
      expect((await reader.describe(moving, "moving")).digest).toBe(second.digest);
      expect(
        proxy.requests.some(
          (request) => request.method === "HEAD" && request.path.endsWith("/manifests/moving"),
        ),
      ).toBe(true);
      expect(
        proxy.requests.some(
          (request) => request.method === "GET" && request.path.endsWith("/manifests/moving"),
        ),
      ).toBe(false);
    });

    it("reports a missing tag as not found", async () => {
      await expect(client().resolveDigest(shop(), "9.9.9")).rejects.toBeInstanceOf(RegistryNotFoundError);
      await expect(client().describe(shop(), "9.9.9")).rejects.toBeInstanceOf(RegistryNotFoundError);
    });

    it("rejects a manifest whose Docker-Content-Digest does not match the body", async () => {
      proxy.inject({
        method: "GET",
        path: /\/manifests\//,
        action: { kind: "alter", digestHeader: `sha256:${"0".repeat(64)}` },
      });
      await expect(client().describe(shop(), "1.0.0")).rejects.toMatchObject({
        code: "registry-digest-mismatch",
      });
    });

    it("rejects a manifest body that was altered in transit", async () => {
      proxy.inject({ method: "GET", path: /\/manifests\//, action: { kind: "alter", flipBodyByte: true } });
      await expect(client().describe(shop(), "1.0.0")).rejects.toMatchObject({
        code: "registry-digest-mismatch",
      });
    });

    it("rejects a manifest fetched by digest whose body hashes to something else", async () => {
      const body = JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: {},
        layers: [],
      });
      proxy.inject({
        method: "GET",
        path: /\/manifests\//,
        action: {
          kind: "respond",
          status: 200,
          headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
          body,
        },
      });
      await expect(client().describe(shop(), pushed["1.0.0"]!)).rejects.toMatchObject({
        code: "registry-digest-mismatch",
      });
    });

    it("rejects a manifest with a wrong Content-Type", async () => {
      proxy.inject({
        method: "GET",
        path: /\/manifests\//,
        action: { kind: "alter", contentType: "text/html" },
      });
      await expect(client().describe(shop(), "1.0.0")).rejects.toMatchObject({
        code: "registry-bad-content-type",
      });
    });

    it("rejects malformed manifest JSON", async () => {
      const body = '{"schemaVersion": 2, "config": ';
      const digest = `sha256:${createHash("sha256").update(body).digest("hex")}`;
      proxy.inject({
        method: "GET",
        path: /\/manifests\//,
        action: { kind: "alter", body, digestHeader: digest },
      });
      await expect(client().describe(shop(), "1.0.0")).rejects.toMatchObject({ code: "registry-bad-json" });
    });

    it("rejects a manifest over the 4 MiB cap", async () => {
      proxy.inject({
        method: "GET",
        path: /\/manifests\//,
        action: {
          kind: "respond",
          status: 200,
          headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
          body: " ".repeat(4 * 1024 * 1024 + 1),
        },
      });
      await expect(client().describe(shop(), "1.0.0")).rejects.toMatchObject({
        code: "registry-response-too-large",
      });
    });
  });

  describe("faults", () => {
    it("backs off that registry after a 429 with Retry-After and fails fast until the time has passed", async () => {
      const limited = client();
      proxy.inject({
        path: /\/manifests\//,
        action: {
          kind: "respond",
          status: 429,
          headers: { "retry-after": "120" },
          body: '{"errors":[{"code":"TOOMANYREQUESTS"}]}',
        },
      });
      const error = await limited.resolveDigest(shop(), "1.0.0").catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RegistryUnavailableError);
      expect((error as RegistryUnavailableError).retryAfterMs).toBe(120_000);
      const sent = proxy.requests.length;
      await expect(limited.listTags(shop())).rejects.toMatchObject({ code: "registry-backoff" });
      expect(proxy.requests.length).toBe(sent);
      expect(sleeps).toEqual([]);
      // Another registry is unaffected.
      expect(
        await limited.resolveDigest(`${registry.host}/${SHOP}`, "1.0.0").catch(() => "other registry failed"),
      ).not.toBe("other registry failed");
      clock += 120_000;
      expect(await limited.resolveDigest(shop(), "1.0.0")).toBe(pushed["1.0.0"]);
    });

    it("takes the back-off from Docker Hub's ratelimit-remaining window when there is no Retry-After", async () => {
      proxy.inject({
        path: /\/manifests\//,
        action: { kind: "respond", status: 429, headers: { "ratelimit-remaining": "0;w=21600" } },
      });
      await expect(client().resolveDigest(shop(), "1.0.0")).rejects.toMatchObject({
        code: "registry-rate-limited",
        retryAfterMs: 21_600_000,
      });
    });

    it("accepts Retry-After as an HTTP date", async () => {
      const retryAt = new Date(clock + 90_000).toUTCString();
      proxy.inject({
        path: /\/manifests\//,
        action: { kind: "respond", status: 429, headers: { "retry-after": retryAt } },
      });
      await expect(client().resolveDigest(shop(), "1.0.0")).rejects.toMatchObject({ retryAfterMs: 90_000 });
    });

    it("retries 5xx with bounded, jittered back-off and then succeeds", async () => {
      proxy.inject({ path: /\/manifests\//, action: { kind: "respond", status: 503 }, times: 2 });
      expect(await client().resolveDigest(shop(), "1.0.0")).toBe(pushed["1.0.0"]);
      expect(sleeps).toHaveLength(2);
      expect(sleeps[1]!).toBeGreaterThan(sleeps[0]!);
    });

    it("gives up on a persistent 5xx after the retry limit with a transient error", async () => {
      proxy.inject({ path: /\/manifests\//, action: { kind: "respond", status: 502 }, times: 100 });
      await expect(
        client({ limits: { maxRetries: 2 } }).resolveDigest(shop(), "1.0.0"),
      ).rejects.toMatchObject({ code: "registry-server-error" });
      expect(proxy.requests.filter((request) => request.path.includes("/manifests/")).length).toBe(3);
    });

    it("retries a request that times out", async () => {
      proxy.inject({ path: /\/manifests\//, action: { kind: "hang" } });
      // The suite's own request deadline: a shorter one also cut the retry short on a loaded
      // machine (two suites beside each other), and the retry must have room to answer.
      expect(await client().resolveDigest(shop(), "1.0.0")).toBe(pushed["1.0.0"]);
      expect(sleeps).toHaveLength(1);
    });

    it("fails with a timeout error when every attempt hangs", async () => {
      proxy.inject({ path: /\/manifests\//, action: { kind: "hang" }, times: 10 });
      await expect(
        client({ limits: { requestTimeoutMs: 200, maxRetries: 1 } }).resolveDigest(shop(), "1.0.0"),
      ).rejects.toMatchObject({ code: "registry-timeout" });
    });

    it("stops a tag walk that exceeds the time cap", async () => {
      proxy.paginate({ pageSize: 1 });
      proxy.inject({ path: /\/tags\/list$/, action: { kind: "respond", status: 503 }, times: 1, after: 1 });
      // each retry sleep moves the fake clock past the cap
      await expect(
        client({ limits: { listTimeoutMs: 100, retryBaseMs: 1_000 } }).listTags(shop()),
      ).rejects.toMatchObject({ code: "registry-list-timeout" });
    });
  });

  // Auth cases exist only for targets with auth; they are not generated (rather than skipped) for the others.
  if (target.auth !== "none")
    describe("authentication", () => {
      it("re-authenticates once when the token expires mid-walk and completes the list", async () => {
        proxy.paginate({ pageSize: 2 });
        const walker = client();
        const before = registry.tokensIssued?.();
        proxy.inject({ path: /\/tags\/list$/, action: { kind: "unauthorized" }, after: 2 });
        expect((await walker.listTags(shop())).sort()).toEqual([...SHOP_TAGS].sort());
        if (before !== undefined) expect(registry.tokensIssued!() - before).toBe(2);
      });

      it("fails cleanly when the registry still refuses after re-authenticating", async () => {
        proxy.paginate({ pageSize: 2 });
        proxy.inject({ path: /\/tags\/list$/, action: { kind: "unauthorized" }, after: 2, times: 2 });
        await expect(client().listTags(shop())).rejects.toBeInstanceOf(RegistryAuthError);
      });

      it("reports wrong credentials without ever showing the password", async () => {
        const wrong = "wrong-canary-Pa55word";
        const error = await client({ password: wrong })
          .listTags(shop())
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(RegistryAuthError);
        expect(String((error as Error).message)).not.toContain(wrong);
        expect(JSON.stringify(error)).not.toContain(wrong);
      });

      it("reports missing credentials as an auth error", async () => {
        await expect(client({ anonymous: true }).describe(shop(), "1.0.0")).rejects.toBeInstanceOf(
          RegistryAuthError,
        );
      });

      if (target.auth === "bearer")
        it("withholds credentials from a token realm on a host that is not trusted", async () => {
          const error = await client({ trustRealm: false })
            .listTags(shop())
            .catch((caught: unknown) => caught);
          expect(error).toBeInstanceOf(RegistryAuthError);
          expect((error as Error).message).toContain("withheld");
        });
    });
});
