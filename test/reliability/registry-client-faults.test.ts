/**
 * docs/reliability.md rows 16–20 and 25 for the registry client: generated sequences of registry
 * faults (429 with Retry-After, 5xx, network errors, timeouts, malformed JSON, a
 * Docker-Content-Digest that does not match the body, wrong content types, oversized manifests,
 * realms and redirects to other hosts or plain HTTP, repeated 401) in front of a correct
 * registry. Whatever happens: a result is the true one or a typed error, credentials go only to
 * the configured host over HTTPS, no request is sent before a Retry-After has passed (fake
 * clock), the number of requests stays bounded, and no error message carries the password.
 */
import { createHash } from "node:crypto";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { createRegistryClient } from "../../src/adapters/registry/index.js";
import { TransientError, UserError } from "../../src/core/errors.js";
import { CanaryWatch } from "../support/canary.js";
import { finishFile, ledgerFile, record } from "../support/reliability-ledger.js";

ledgerFile("registry-client-faults");
afterAll(() => finishFile("registry-client-faults"));

const HOST = "registry.example.com";
const sha256 = (bytes: Buffer | string) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const CONFIG = Buffer.from(
  JSON.stringify({
    created: "2026-01-01T00:00:00Z",
    architecture: "amd64",
    os: "linux",
    config: { Labels: { "org.opencontainers.image.revision": "abc" } },
  }),
);
const MANIFEST = Buffer.from(
  JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: {
      mediaType: "application/vnd.oci.image.config.v1+json",
      digest: sha256(CONFIG),
      size: CONFIG.length,
    },
    layers: [],
  }),
);
const TRUE_DIGEST = sha256(MANIFEST);
const TAGS = ["1.7.0", "1.8.0"];

const FAULTS = [
  "429",
  "500",
  "503",
  "network-error",
  "timeout",
  "malformed-json",
  "digest-mismatch",
  "wrong-content-type",
  "oversized",
  "foreign-realm",
  "metadata-realm",
  "redirect-foreign",
  "redirect-http",
  "unauthorized",
] as const;
type Fault = (typeof FAULTS)[number];

interface Sent {
  at: number;
  url: string;
  authorization: string | null;
}

function correct(url: URL, method: string): Response {
  const path = url.pathname;
  if (path === "/v2/acme/shop/tags/list")
    return new Response(JSON.stringify({ name: "acme/shop", tags: TAGS }), {
      headers: { "content-type": "application/json" },
    });
  if (path.startsWith("/v2/acme/shop/manifests/")) {
    const headers = {
      "content-type": "application/vnd.oci.image.manifest.v1+json",
      "docker-content-digest": TRUE_DIGEST,
      "content-length": String(MANIFEST.length),
    };
    return new Response(method === "HEAD" ? null : MANIFEST, { headers });
  }
  if (path === `/v2/acme/shop/blobs/${sha256(CONFIG)}`)
    return new Response(CONFIG, { headers: { "content-type": "application/octet-stream" } });
  if (path === "/v2/") return new Response("{}", { headers: { "content-type": "application/json" } });
  return new Response('{"errors":[{"code":"NAME_UNKNOWN"}]}', {
    status: 404,
    headers: { "content-type": "application/json" },
  });
}

function faulty(fault: Fault, url: URL, method: string): Response | Promise<Response> {
  // Manifest faults only mean something on manifest requests (an empty tag list is legitimate).
  const manifestOnly = fault === "digest-mismatch" || fault === "wrong-content-type" || fault === "oversized";
  if (manifestOnly && !url.pathname.includes("/manifests/")) return correct(url, method);
  switch (fault) {
    case "429":
      return new Response('{"errors":[{"code":"TOOMANYREQUESTS"}]}', {
        status: 429,
        headers: {
          "retry-after": "30",
          "ratelimit-remaining": "0;w=21600",
          "content-type": "application/json",
        },
      });
    case "500":
    case "503":
      return new Response("oops", { status: Number(fault) });
    case "network-error":
      return Promise.reject(new TypeError("fetch failed"));
    case "timeout":
      return Promise.reject(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
    case "malformed-json":
      return new Response('{"tags": [', { headers: { "content-type": "application/json" } });
    case "digest-mismatch": {
      const response = correct(url, method);
      const headers = new Headers(response.headers);
      headers.set("docker-content-digest", sha256("something else"));
      return new Response(method === "HEAD" ? null : MANIFEST, { status: response.status, headers });
    }
    case "wrong-content-type":
      return new Response(method === "HEAD" ? null : MANIFEST, {
        headers: { "content-type": "text/html", "docker-content-digest": TRUE_DIGEST },
      });
    case "oversized": {
      const big = Buffer.alloc(9 * 1024 * 1024, 0x20);
      return new Response(method === "HEAD" ? null : big, {
        headers: {
          "content-type": "application/vnd.oci.image.manifest.v1+json",
          "content-length": String(big.length),
        },
      });
    }
    case "foreign-realm":
      return new Response("", {
        status: 401,
        headers: { "www-authenticate": 'Bearer realm="https://auth.evil.example/token",service="x"' },
      });
    case "metadata-realm":
      return new Response("", {
        status: 401,
        headers: { "www-authenticate": 'Bearer realm="http://169.254.169.254/latest/meta-data",service="x"' },
      });
    case "redirect-foreign":
      return new Response(null, {
        status: 307,
        headers: { location: `https://evil.example${url.pathname}` },
      });
    case "redirect-http":
      return new Response(null, { status: 307, headers: { location: `http://${HOST}${url.pathname}` } });
    case "unauthorized":
      return new Response('{"errors":[{"code":"UNAUTHORIZED"}]}', {
        status: 401,
        headers: { "content-type": "application/json", "www-authenticate": `Basic realm="${HOST}"` },
      });
  }
}

/**
 * Another host (a redirect target, a foreign realm): serves the tag list and blobs as they are,
 * but a tampered manifest that still claims the true digest; anything else gets a token.
 */
function foreignHost(url: URL, method: string): Response {
  if (url.pathname.includes("/manifests/")) {
    const tampered = Buffer.from(MANIFEST.toString().replace('"layers":[]', '"layers":[],"evil":true'));
    return new Response(method === "HEAD" ? null : tampered, {
      headers: {
        "content-type": "application/vnd.oci.image.manifest.v1+json",
        "docker-content-digest": TRUE_DIGEST,
      },
    });
  }
  if (url.pathname.includes("/tags/list") || url.pathname.includes("/blobs/")) return correct(url, method);
  return new Response('{"token":"stolen"}', { headers: { "content-type": "application/json" } });
}

const operations = ["describe", "resolveDigest", "listTags"] as const;

describe("rows 16–20: registry faults in any order", () => {
  it("row 16–20: every operation under generated faults returns the true answer or a typed error, with credentials only for the configured host and no request before Retry-After", async () => {
    const canary = new CanaryWatch();
    const password = canary.secret("registry-password");
    canary.plantBasic("ferry", password, "registry password");
    let tried = 0;
    let wrongAnswers = 0;
    let leaks = 0;
    let earlyRequests = 0;
    let succeeded = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(
        fc
          .tuple(
            fc.constantFrom(...operations),
            fc.array(fc.constantFrom(...FAULTS), { minLength: 1, maxLength: 6 }),
          )
          // A HEAD has no body to check a lying Docker-Content-Digest against: resolveDigest is a
          // hint only, and what Ferry writes comes from describe's verified digest.
          .filter(
            ([operation, faults]) => !(operation === "resolveDigest" && faults.includes("digest-mismatch")),
          ),
        async ([operation, faults]) => {
          tried++;
          let clock = 1_000_000;
          const sent: Sent[] = [];
          const queue = [...faults];
          const fetch = (async (input: string | URL | Request, init: RequestInit = {}) => {
            const url = new URL(String(input));
            const method = init.method ?? "GET";
            sent.push({
              at: clock,
              url: url.href,
              authorization: new Headers(init.headers).get("authorization"),
            });
            if (url.hostname !== HOST) return foreignHost(url, method);
            const fault = queue.shift();
            return fault ? faulty(fault, url, method) : correct(url, method);
          }) as typeof globalThis.fetch;
          const client = createRegistryClient({
            registries: { [HOST]: { username: "ferry", passwordEnv: "REGISTRY_PASSWORD" } },
            env: { REGISTRY_PASSWORD: password, REGISTRY_PASSWORD_HOSTS: HOST },
            fetch,
            now: () => clock,
            sleep: async (ms) => {
              clock += ms;
            },
            random: () => 0.5,
          });
          const repository = `${HOST}/acme/shop`;
          let outcome: unknown;
          let failed: unknown;
          try {
            outcome =
              operation === "describe"
                ? (await client.describe(repository, "1.8.0")).digest
                : operation === "resolveDigest"
                  ? await client.resolveDigest(repository, "1.8.0")
                  : await client.listTags(repository);
            succeeded++;
          } catch (error) {
            failed = error;
            refused++;
          }
          const label = `${operation} with ${faults.join(", ")}`;
          if (failed === undefined) {
            const expected = operation === "listTags" ? TAGS : TRUE_DIGEST;
            if (JSON.stringify(outcome) !== JSON.stringify(expected)) wrongAnswers++;
            expect(outcome, label).toEqual(expected);
          } else {
            // Typed: user-fixable or transient, never a bare crash.
            expect(
              failed instanceof UserError || failed instanceof TransientError,
              `${label}: ${String(failed)}`,
            ).toBe(true);
            canary.scan(
              `error of ${label}`,
              `${(failed as Error).message}\n${(failed as Error).stack ?? ""}`,
            );
          }
          // Row 16: credentials only to the configured host, only over HTTPS.
          const misdirected = sent.filter(
            (request) =>
              request.authorization !== null &&
              (new URL(request.url).hostname !== HOST || !request.url.startsWith("https://")),
          );
          leaks += misdirected.length;
          expect(misdirected, label).toEqual([]);
          expect(
            sent.filter((request) => request.url.startsWith("http://169.254.169.254")),
            label,
          ).toEqual([]);
          // Row 17: after a 429 with Retry-After: 30, nothing goes to the registry before 30 s pass.
          const ownRequests = sent.filter((request) => new URL(request.url).hostname === HOST);
          let answeredWith429At: number | undefined;
          let faultIndex = 0;
          for (const request of ownRequests) {
            if (answeredWith429At !== undefined && request.at - answeredWith429At < 30_000) earlyRequests++;
            if (faultIndex < faults.length && faults[faultIndex++] === "429") answeredWith429At = request.at;
          }
          // Never a hot loop: a bounded number of requests whatever the faults.
          expect(sent.length, label).toBeLessThanOrEqual(40);
        },
      ),
      { seed: 16_20, numRuns: Number(process.env.FERRY_RELIABILITY_REGISTRY_CLIENT_RUNS ?? 1500) },
    );
    record("registry client: fault sequences", {
      tried,
      sideEffects: wrongAnswers + leaks + earlyRequests,
      canaryHits: canary.hits.length,
    });
    expect(earlyRequests).toBe(0);
    expect(canary.hits).toEqual([]);
    // Both outcomes were exercised.
    expect(succeeded).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(20);
  });

  it("row 18: a tag list whose next link loops back on itself ends with the tags or an explicit error, in a bounded number of requests", async () => {
    let requests = 0;
    const fetch = (async (input: string | URL | Request) => {
      requests++;
      const url = new URL(String(input));
      return new Response(JSON.stringify({ name: "acme/shop", tags: [`t${requests}`] }), {
        headers: {
          "content-type": "application/json",
          link: `</v2/acme/shop/tags/list?n=1&last=${url.searchParams.get("last") ?? "a"}>; rel="next"`,
        },
      });
    }) as typeof globalThis.fetch;
    const client = createRegistryClient({
      registries: { [HOST]: {} },
      fetch,
      sleep: async () => {},
      random: () => 0.5,
    });
    const outcome = await client.listTags(`${HOST}/acme/shop`).then(
      (tags) => ({ tags }),
      (error: unknown) => ({ error }),
    );
    if ("error" in outcome)
      expect(outcome.error instanceof UserError || outcome.error instanceof TransientError).toBe(true);
    expect(requests).toBeLessThanOrEqual(1000);
    record("registry client: pagination loops", { tried: 1 });
  });
});
