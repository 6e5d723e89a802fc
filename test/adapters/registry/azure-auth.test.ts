import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createRegistryClient, RegistryAuthError } from "../../../src/adapters/registry/index.js";
import { ambientBindings, contextWithAmbient } from "../../support/ambient-bindings.js";
import { registryRuleProblems } from "../../../src/core/config/registry-rules.js";
import { REDACTED, SecretRedactor } from "../../../src/core/redact.js";
import { pushImage } from "../../../packages/sandbox/src/registry/push-image.js";
import { acrRefreshToken, startFakeAcr, type FakeAcr } from "../../support/cloud/fake-acr.js";
import { startDistribution, type RunningDistribution } from "../../support/registry-distribution.js";

/**
 * `auth: azure` end to end through the SDK: @azure/identity's DefaultAzureCredential reads the
 * client secret of Ferry's environment and asks a loopback Entra ID (AZURE_AUTHORITY_HOST) for a
 * token, Ferry exchanges it at the ACR login server's `/oauth2/exchange` for a refresh token, and
 * the registry's Bearer challenge sends it to ACR's `/oauth2/token`, whose access token the real
 * CNCF registry (token auth) verifies. The fakes are built from "Azure Container Registry
 * authentication - OAuth2 / token exchange" (https://github.com/Azure/acr/blob/main/docs/AAD-OAuth.md)
 * and Entra's client credentials flow
 * (https://learn.microsoft.com/en-us/entra/identity-platform/v2-oauth2-client-creds-grant-flow);
 * test/support/cloud/fake-acr.ts cites each endpoint.
 */

const HOST = "ferrytest.azurecr.io";
const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT_ID = "5b1c2f3e-0d4a-4c59-9e8a-ferry0000001";
const CLIENT_SECRET = "azure-client-secret-canary-4b7e";

let registry: RunningDistribution;
let acr: FakeAcr;

beforeAll(async () => {
  acr = await startFakeAcr({ host: HOST, tenant: TENANT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
  registry = await startDistribution("token", { tokenService: acr.tokenService });
  acr.setUpstream(registry.url);
});

afterAll(async () => {
  await registry?.close();
  await acr?.close();
});

function stubAzureEnv(secret = CLIENT_SECRET): void {
  vi.stubEnv("AZURE_TENANT_ID", TENANT);
  vi.stubEnv("AZURE_CLIENT_ID", CLIENT_ID);
  vi.stubEnv("AZURE_CLIENT_SECRET", secret);
  vi.stubEnv("AZURE_AUTHORITY_HOST", acr.authorityHost);
  // Only the environment credential: no managed identity probe of 169.254.169.254 from a test.
  vi.stubEnv("AZURE_TOKEN_CREDENTIALS", "EnvironmentCredential");
}

beforeEach(() => {
  stubAzureEnv();
  acr.set({ clientSecret: CLIENT_SECRET, refreshLifetimeSeconds: 3 * 3600 });
});
afterEach(() => vi.unstubAllEnvs());

function client(clock: { now: number } = { now: Date.now() }, secrets = new SecretRedactor()) {
  return createRegistryClient({
    registries: { [HOST]: { auth: "azure" } },
    secretBindings: ambientBindings([HOST]),
    loopbackOrigins: { [HOST]: acr.origin },
    azureAuthorityCa: acr.authorityCa,
    identityEnv: { AZURE_CLIENT_ID: CLIENT_ID, AZURE_TENANT_ID: TENANT },
    secrets,
    now: () => clock.now,
    limits: { tagCacheTtlMs: 0, maxRetries: 0 },
  });
}

async function pushed(repository: string, tag: string): Promise<void> {
  // Pushed through ACR's front door, with a refresh token from the same exchange.
  const refresh = await acrRefreshToken(acr, HOST);
  await pushImage(acr.origin, repository, tag, {
    auth: { username: "00000000-0000-0000-0000-000000000000", password: refresh },
  });
}

describe("auth: azure (Azure Container Registry)", () => {
  beforeAll(async () => {
    stubAzureEnv();
    for (const tag of ["1.0.0", "1.1.0", "1.2.0"]) await pushed("shop", tag);
    await pushed("other", "1.0.0");
    vi.unstubAllEnvs();
  });

  it("lists tags from the real registry with an ACR refresh token exchanged for the Entra ID token", async () => {
    const secrets = new SecretRedactor();
    const before = acr.counts();
    const tags = await client(undefined, secrets).listTags(`${HOST}/shop`);
    expect(tags.sort()).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
    const after = acr.counts();
    expect(after.entraTokens - before.entraTokens).toBe(1);
    expect(after.exchanges - before.exchanges).toBe(1);
    expect(after.accessTokens - before.accessTokens).toBe(1);
    // The refresh token Ferry holds is a known secret.
    const refresh = acr.issued().at(-1)!;
    expect(secrets.redact(`x ${refresh} x`)).toBe(`x ${REDACTED} x`);
  });

  it("exchanges once for many concurrent requests, and once more only shortly before the refresh token expires", async () => {
    const clock = { now: Date.now() };
    const registryClient = client(clock);
    const before = acr.counts();
    const digests = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        registryClient.resolveDigest(`${HOST}/shop`, ["1.0.0", "1.1.0", "1.2.0"][i % 3]!),
      ),
    );
    expect(new Set(digests).size).toBe(3);
    expect(acr.counts().exchanges - before.exchanges).toBe(1);
    expect(acr.counts().entraTokens - before.entraTokens).toBe(1);
    // One access token for the one scope (repository:shop:pull), however many requests wanted it.
    expect(acr.counts().accessTokens - before.accessTokens).toBe(1);

    // The refresh token lives min(3 h, the Entra token's hour): 40 minutes on, still cached.
    clock.now += 40 * 60_000;
    await registryClient.listTags(`${HOST}/shop`);
    expect(acr.counts().exchanges - before.exchanges).toBe(1);

    // Four minutes before the hour, concurrent requests share one refresh.
    clock.now += 16 * 60_000;
    await Promise.all(Array.from({ length: 8 }, () => registryClient.listTags(`${HOST}/shop`)));
    expect(acr.counts().exchanges - before.exchanges).toBe(2);
    expect(acr.counts().entraTokens - before.entraTokens).toBe(2);
  });

  it("explains a revoked refresh token in one line without a secret, and exchanges again on the next cycle", async () => {
    const secrets = new SecretRedactor();
    const registryClient = client(undefined, secrets);
    await registryClient.listTags(`${HOST}/shop`);
    acr.revokeRefreshTokens();
    const before = acr.counts();
    // A new scope needs a new access token: the revoked refresh token is refused.
    const error = await registryClient.resolveDigest(`${HOST}/other`, "1.0.0").then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RegistryAuthError);
    const message = (error as Error).message;
    expect(message).toBe(
      `${HOST}: token endpoint refused the credentials of auth: azure as Entra client ${CLIENT_ID} in tenant ${TENANT} (HTTP 401, UNAUTHORIZED)`,
    );
    for (const token of acr.issued()) expect(message).not.toContain(token);
    expect(secrets.redact(message)).toBe(message);

    // The refused refresh token was dropped although it had hours to live: the next cycle exchanges anew.
    await expect(registryClient.resolveDigest(`${HOST}/other`, "1.0.0")).resolves.toMatch(/^sha256:/);
    expect(acr.counts().exchanges - before.exchanges).toBe(1);
  });

  it("names the provider, the identity and what Entra ID said for a wrong client secret, and asks again next time", async () => {
    vi.stubEnv("AZURE_CLIENT_SECRET", "wrong-azure-secret-canary-77aa");
    const registryClient = client();
    const error = await registryClient.listTags(`${HOST}/shop`).catch((caught: Error) => caught);
    const message = (error as Error).message;
    expect(message.split("\n")).toHaveLength(1);
    expect(message).toMatch(
      new RegExp(
        `^${HOST.replace(/\./g, "\\.")}: auth: azure as Entra client ${CLIENT_ID} in tenant ${TENANT}: no Entra ID token: .*AADSTS7000215: Invalid client secret provided`,
      ),
    );
    expect(message).not.toContain("wrong-azure-secret-canary-77aa");
    vi.stubEnv("AZURE_CLIENT_SECRET", CLIENT_SECRET);
    await expect(registryClient.listTags(`${HOST}/shop`)).resolves.toHaveLength(3);
  });
});

describe("auth: azure with a token realm on another host", () => {
  let front: Server;
  let realm: Server;
  const realmAuthorizations: (string | undefined)[] = [];
  let frontOrigin = "";
  let realmHost = "";

  beforeAll(async () => {
    // The "other host": a token endpoint that records what it is sent and issues nothing.
    realm = createServer((req, res) => {
      realmAuthorizations.push(req.headers.authorization);
      res.writeHead(401, { "content-type": "application/json" }).end('{"errors":[{"code":"UNAUTHORIZED"}]}');
    });
    await new Promise<void>((resolve) => realm.listen(0, "127.0.0.1", resolve));
    // `localhost:PORT` is another host than the registry's `127.0.0.1:PORT`.
    realmHost = `localhost:${(realm.address() as AddressInfo).port}`;
    // A login server whose challenge names that realm; its /oauth2/exchange is ACR's.
    front = createServer((req, res) => {
      if ((req.url ?? "").startsWith("/oauth2/")) {
        const forward = httpRequest(
          new URL(req.url!, acr.origin),
          { method: req.method, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        req.pipe(forward);
        return;
      }
      res
        .writeHead(401, {
          "www-authenticate": `Bearer realm="http://${realmHost}/oauth2/token",service="${HOST}"`,
          "content-type": "application/json",
        })
        .end('{"errors":[{"code":"UNAUTHORIZED"}]}');
    });
    await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
    frontOrigin = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    front?.closeAllConnections();
    await new Promise<void>((resolve) => (front ? front.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (realm ? realm.close(() => resolve()) : resolve()));
  });

  const hostile = (trustedRealmHosts?: Record<string, string[]>) =>
    createRegistryClient({
      registries: { [HOST]: { auth: "azure" } },
      secretBindings: ambientBindings([HOST]),
      loopbackOrigins: { [HOST]: frontOrigin },
      azureAuthorityCa: acr.authorityCa,
      limits: { maxRetries: 0 },
      ...(trustedRealmHosts ? { trustedRealmHosts } : {}),
    });

  it("derives no credential for an untrusted realm and sends it nothing, and sends the refresh token once the operator trusts it", async () => {
    const before = acr.counts();
    realmAuthorizations.length = 0;
    const error = await hostile()
      .listTags(`${HOST}/shop`)
      .catch((caught: Error) => caught);
    expect((error as Error).message).toBe(
      `${HOST}: token endpoint refused anonymous access (HTTP 401, UNAUTHORIZED) (credentials were withheld from untrusted realm host ${realmHost})`,
    );
    expect(realmAuthorizations).toEqual([undefined]);
    expect(acr.counts().entraTokens - before.entraTokens).toBe(0);
    expect(acr.counts().exchanges - before.exchanges).toBe(0);

    realmAuthorizations.length = 0;
    await hostile({ [HOST]: [realmHost] })
      .listTags(`${HOST}/shop`)
      .catch(() => undefined);
    expect(acr.counts().exchanges - before.exchanges).toBe(1);
    expect(realmAuthorizations).toHaveLength(1);
    expect(realmAuthorizations[0]).toMatch(/^Basic /);
  });
});

describe("auth: azure in the config", () => {
  it("accepts an ACR host, and refuses another host, a secret named next to the provider, and plain HTTP", () => {
    const { errors } = registryRuleProblems(
      {
        registries: {
          [HOST]: { auth: "azure" },
          "registry.example.com": { auth: "azure" },
          "other.azurecr.io": {
            auth: "azure",
            username: "u",
            passwordEnv: "FERRY_REGISTRY_X",
            insecure: true,
          },
        },
      },
      contextWithAmbient([HOST, "registry.example.com", "other.azurecr.io"]),
    );
    expect(errors.map((problem) => `${problem.path.join(".")}: ${problem.message}`)).toEqual([
      'registries.registry.example.com.auth: auth: azure is for Azure Container Registry hosts (<name>.azurecr.io), not "registry.example.com"',
      "registries.other.azurecr.io.username: auth: azure takes its credentials from the Azure default credential chain of Ferry's environment; remove username",
      "registries.other.azurecr.io.passwordEnv: auth: azure takes its credentials from the Azure default credential chain of Ferry's environment; remove passwordEnv",
      "registries.other.azurecr.io.insecure: auth: azure never sends Entra ID or ACR tokens over plain HTTP",
    ]);
  });
});
