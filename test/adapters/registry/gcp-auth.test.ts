import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it, vi } from "vitest";
import { createRegistryClient } from "../../../src/adapters/registry/index.js";
import { ambientBindings, contextWithAmbient } from "../../support/ambient-bindings.js";
import { registryRuleProblems } from "../../../src/core/config/registry-rules.js";
import { REDACTED, SecretRedactor } from "../../../src/core/redact.js";
import { pushImage } from "../../../packages/sandbox/src/registry/push-image.js";
import { startFakeGceMetadata, type FakeGceMetadata } from "../../support/cloud/fake-gce-metadata.js";
import { startDistribution, type RunningDistribution } from "../../support/registry-distribution.js";

/**
 * `auth: gcp`: google-auth-library's Application Default Credentials find a (loopback fake) GCE
 * metadata server through GCE_METADATA_HOST, and the access token it hands out is the password of
 * `oauth2accesstoken` at the real CNCF registry (htpasswd) standing in for Artifact Registry.
 */

const HOST = "europe-west1-docker.pkg.dev";
const TOKEN = "ya29.gcp-access-token-canary-3e8a";

let registry: RunningDistribution;
let metadata: FakeGceMetadata;

beforeAll(async () => {
  registry = await startDistribution("basic", { users: { oauth2accesstoken: TOKEN } });
  metadata = await startFakeGceMetadata({ token: TOKEN, expiresIn: 3599 });
  await pushImage(registry.url, "acme/images/shop", "1.0.0", {
    auth: { username: "oauth2accesstoken", password: TOKEN },
  });
});
afterAll(async () => {
  await metadata?.close();
  await registry?.close();
});
beforeEach(() => {
  vi.stubEnv("GCE_METADATA_HOST", metadata.host);
  vi.stubEnv("GOOGLE_APPLICATION_CREDENTIALS", "");
  vi.stubEnv("CLOUDSDK_CONFIG", "/nonexistent/ferry-gcloud");
  // The project is named, so google-auth-library does not run `gcloud config config-helper` (seconds) to find it.
  vi.stubEnv("GOOGLE_CLOUD_PROJECT", "ferry-test-project");
  metadata.set({ token: TOKEN, expiresIn: 3599 });
});
afterEach(() => vi.unstubAllEnvs());

function client(secrets = new SecretRedactor()) {
  return createRegistryClient({
    registries: { [HOST]: { auth: "gcp" } },
    secretBindings: ambientBindings([HOST]),
    loopbackOrigins: { [HOST]: registry.url },
    secrets,
    limits: { tagCacheTtlMs: 0, maxRetries: 0 },
  });
}

describe("auth: gcp (Artifact Registry)", () => {
  it("lists tags with the metadata server's access token as oauth2accesstoken, one token for concurrent requests", async () => {
    const secrets = new SecretRedactor();
    const registryClient = client(secrets);
    const before = metadata.tokenRequests();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => registryClient.listTags(`${HOST}/acme/images/shop`)),
    );
    expect(results.map((tags) => tags.join())).toEqual(Array(6).fill("1.0.0"));
    expect(metadata.tokenRequests() - before).toBe(1);
    expect(secrets.redact(TOKEN)).toBe(REDACTED);
  });

  it("refreshes once for concurrent requests, only shortly before the access token expires", async () => {
    const clock = { now: Date.now() };
    const registryClient = createRegistryClient({
      registries: { [HOST]: { auth: "gcp" } },
      secretBindings: ambientBindings([HOST]),
      loopbackOrigins: { [HOST]: registry.url },
      now: () => clock.now,
      limits: { tagCacheTtlMs: 0, maxRetries: 0 },
    });
    const before = metadata.tokenRequests();
    await Promise.all(Array.from({ length: 6 }, () => registryClient.listTags(`${HOST}/acme/images/shop`)));
    expect(metadata.tokenRequests() - before).toBe(1);
    // The token lives 3599 s: fifty minutes on, still the cached one.
    clock.now += 50 * 60_000;
    await registryClient.listTags(`${HOST}/acme/images/shop`);
    expect(metadata.tokenRequests() - before).toBe(1);
    // Within five minutes of expiry, eight concurrent requests share one refresh.
    clock.now += 6 * 60_000;
    await Promise.all(Array.from({ length: 8 }, () => registryClient.listTags(`${HOST}/acme/images/shop`)));
    expect(metadata.tokenRequests() - before).toBe(2);
  });

  it("explains a refused token in one line naming the provider, and asks again on the next cycle", async () => {
    metadata.set({ token: "ya29.revoked-token-canary-91f2", expiresIn: 3599 });
    const registryClient = client();
    const error = await registryClient.listTags(`${HOST}/acme/images/shop`).catch((caught: Error) => caught);
    expect((error as Error).message).toBe(
      `${HOST}: unauthorized for acme/images/shop after re-authenticating with auth: gcp as Google Application Default Credentials; the registry said UNAUTHORIZED`,
    );
    metadata.set({ token: TOKEN, expiresIn: 3599 });
    await expect(registryClient.listTags(`${HOST}/acme/images/shop`)).resolves.toEqual(["1.0.0"]);
  });

  it("refuses a host that is not Google's and a secret named next to the provider", () => {
    const { errors } = registryRuleProblems(
      {
        registries: {
          "registry.example.com": { auth: "gcp" },
          [HOST]: { auth: "gcp", passwordEnv: "FERRY_REGISTRY_X", username: "oauth2accesstoken" },
        },
      },
      contextWithAmbient([HOST, "registry.example.com"]),
    );
    expect(errors.map((problem) => `${problem.path.join(".")}: ${problem.message}`)).toEqual([
      'registries.registry.example.com.auth: auth: gcp is for Artifact Registry (<location>-docker.pkg.dev) and gcr.io hosts, not "registry.example.com"',
      `registries.${HOST}.username: auth: gcp takes its credentials from Google Application Default Credentials of Ferry's environment; remove username`,
      `registries.${HOST}.passwordEnv: auth: gcp takes its credentials from Google Application Default Credentials of Ferry's environment; remove passwordEnv`,
    ]);
  });
});
