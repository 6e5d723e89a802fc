/**
 * The credential cache's figures: requests to each provider's token endpoint per 1,000 registry
 * requests to the real CNCF registry, 10 at a time, spread over a simulated day. ECR
 * (`GetAuthorizationToken`, tokens live 12 hours) with and without the cache; Google (the GCE
 * metadata token endpoint, tokens live an hour); Azure (Entra's token endpoint and ACR's
 * `/oauth2/exchange`, refresh tokens live as long as the Entra token, an hour here, and ACR's
 * `/oauth2/token` per scope, whose access tokens name no lifetime, so 60 s apply); a Docker
 * credential helper (its answers carry no expiry: reused 10 minutes, renewed after 5). Without
 * the cache every provider costs one token fetch (Azure: three requests) per registry request.
 * The fakes are the loopback ones of test/support/cloud/.
 */
import { createRegistryClient } from "../../src/adapters/registry/index.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RegistryClientOptions } from "../../src/adapters/registry/index.js";
import { ACR_NULL_USER, acrRefreshToken, startFakeAcr } from "../support/cloud/fake-acr.js";
import { startFakeEcr } from "../support/cloud/fake-ecr.js";
import { startFakeGceMetadata } from "../support/cloud/fake-gce-metadata.js";
import { distributionMissingMessage, startDistribution } from "../support/registry-distribution.js";
import { ambientBindings } from "../support/ambient-bindings.js";
import { BenchSkipped } from "./skipped.js";
import { sized } from "./size.js";

const HOST = "123456789012.dkr.ecr.us-east-1.amazonaws.com";
const PASSWORD = "bench-ecr-password-0123456789";
const REQUESTS = sized(1000, 100);
const PARALLEL = 10;
const DAY_MS = 24 * 3600_000;
const T0 = Date.parse("2026-01-01T00:00:00Z");

export async function bench(): Promise<Record<string, number>> {
  const missing = distributionMissingMessage();
  if (missing) throw new BenchSkipped(missing);
  const saved = { ...process.env };
  Object.assign(process.env, {
    AWS_ACCESS_KEY_ID: "AKIAFERRYBENCH000001",
    AWS_SECRET_ACCESS_KEY: "ferry-bench-secret-access-key",
    AWS_EC2_METADATA_DISABLED: "true",
    AWS_CONFIG_FILE: "/nonexistent/ferry-aws-config",
    AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/ferry-aws-credentials",
  });
  const registry = await startDistribution("basic", { users: { AWS: PASSWORD } });
  const clock = { now: T0 };
  // Every answer is valid 12 hours from the simulated now.
  const ecr = await startFakeEcr({
    proxyEndpoint: `https://${HOST}`,
    password: PASSWORD,
    expiresAt: new Date(T0 + 12 * 3600_000),
  });
  try {
    await pushImage(registry.url, "shop", "1.0.0", { auth: { username: "AWS", password: PASSWORD } });
    const run = async (cached: boolean): Promise<number> => {
      clock.now = T0;
      const client = createRegistryClient({
        registries: { [HOST]: { auth: "aws" } },
        secretBindings: ambientBindings([HOST]),
        ecrEndpoint: ecr.url,
        loopbackOrigins: { [HOST]: registry.url },
        now: () => clock.now,
        limits: { tagCacheTtlMs: 0, requestsPerMinute: 1_000_000 },
      });
      const before = ecr.requests();
      for (let sent = 0; sent < REQUESTS; sent += PARALLEL) {
        clock.now = T0 + Math.floor((sent / REQUESTS) * DAY_MS);
        ecr.set({ password: PASSWORD, expiresAt: new Date(clock.now + 12 * 3600_000) });
        await Promise.all(
          Array.from({ length: PARALLEL }, () =>
            cached
              ? client.resolveDigest(`${HOST}/shop`, "1.0.0")
              : fresh().resolveDigest(`${HOST}/shop`, "1.0.0"),
          ),
        );
      }
      return ecr.requests() - before;
    };
    // Without the cache: a client per request, as a side job that logs in each time would.
    const fresh = () =>
      createRegistryClient({
        registries: { [HOST]: { auth: "aws" } },
        secretBindings: ambientBindings([HOST]),
        ecrEndpoint: ecr.url,
        loopbackOrigins: { [HOST]: registry.url },
        now: () => clock.now,
        limits: { tagCacheTtlMs: 0 },
      });
    return {
      [`registry.ecr_token_requests_per_${REQUESTS}_registry_requests.cached`]: await run(true),
      [`registry.ecr_token_requests_per_${REQUESTS}_registry_requests.uncached`]: await run(false),
      ...(await otherProviders()),
    };
  } finally {
    await ecr.close();
    await registry.close();
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}

/**
 * 1,000 requests, 10 at a time, over a simulated day starting now. The SDKs compute expiries from
 * the real clock, so before each batch `expiresFrom(offsetSeconds)` makes the fakes answer
 * lifetimes shifted by how far the simulated clock is ahead: a token lives its hour of simulated time.
 */
async function overADay(
  expiresFrom: (offsetSeconds: number) => void,
  options: Pick<
    RegistryClientOptions,
    "registries" | "secretBindings" | "loopbackOrigins" | "azureAuthorityCa" | "dockerConfigPath"
  >,
  repository: string,
): Promise<void> {
  const start = Date.now();
  const clock = { now: start };
  const client = createRegistryClient({
    ...options,
    now: () => clock.now,
    limits: { tagCacheTtlMs: 0, requestsPerMinute: 1_000_000 },
  });
  for (let sent = 0; sent < REQUESTS; sent += PARALLEL) {
    clock.now = start + Math.floor((sent / REQUESTS) * DAY_MS);
    expiresFrom(Math.round((clock.now - Date.now()) / 1000));
    await Promise.all(Array.from({ length: PARALLEL }, () => client.resolveDigest(repository, "1.0.0")));
  }
}

async function otherProviders(): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  // Google: the metadata server's access token as oauth2accesstoken.
  const gcpHost = "europe-west1-docker.pkg.dev";
  const gcpToken = "ya29.bench-gcp-access-token-0123456789";
  const gcpRegistry = await startDistribution("basic", { users: { oauth2accesstoken: gcpToken } });
  const metadata = await startFakeGceMetadata({ token: gcpToken, expiresIn: 3599 });
  try {
    Object.assign(process.env, {
      GCE_METADATA_HOST: metadata.host,
      GOOGLE_APPLICATION_CREDENTIALS: "",
      CLOUDSDK_CONFIG: "/nonexistent/ferry-gcloud",
      // Named, so google-auth-library does not run `gcloud config config-helper` to find it.
      GOOGLE_CLOUD_PROJECT: "ferry-bench-project",
    });
    await pushImage(gcpRegistry.url, "acme/shop", "1.0.0", {
      auth: { username: "oauth2accesstoken", password: gcpToken },
    });
    const before = metadata.tokenRequests();
    await overADay(
      (offset) => metadata.set({ token: gcpToken, expiresIn: 3599 + offset }),
      {
        registries: { [gcpHost]: { auth: "gcp" } },
        secretBindings: ambientBindings([gcpHost]),
        loopbackOrigins: { [gcpHost]: gcpRegistry.url },
      },
      `${gcpHost}/acme/shop`,
    );
    figures[`registry.gcp_token_requests_per_${REQUESTS}_registry_requests.cached`] =
      metadata.tokenRequests() - before;
  } finally {
    await metadata.close();
    await gcpRegistry.close();
  }

  // Azure: Entra's token endpoint, ACR's exchange, ACR's access tokens.
  const acrHost = "ferrybench.azurecr.io";
  const clientSecret = "bench-azure-client-secret-0123456789";
  const acr = await startFakeAcr({
    host: acrHost,
    tenant: "bench000-0000-0000-0000-000000000000",
    clientId: "bench000-0000-0000-0000-00000000c1d0",
    clientSecret,
  });
  const acrRegistry = await startDistribution("token", { tokenService: acr.tokenService });
  acr.setUpstream(acrRegistry.url);
  try {
    Object.assign(process.env, {
      AZURE_TENANT_ID: acr.tenant,
      AZURE_CLIENT_ID: acr.clientId,
      AZURE_CLIENT_SECRET: clientSecret,
      AZURE_AUTHORITY_HOST: acr.authorityHost,
      AZURE_TOKEN_CREDENTIALS: "EnvironmentCredential",
    });
    const refresh = await acrRefreshToken(acr, acrHost);
    await pushImage(acr.origin, "acme/shop", "1.0.0", {
      auth: { username: ACR_NULL_USER, password: refresh },
    });
    const before = acr.counts();
    await overADay(
      (offset) => acr.set({ entraExpiresIn: 3599 + offset, refreshLifetimeSeconds: 3 * 3600 + offset }),
      {
        registries: { [acrHost]: { auth: "azure" } },
        secretBindings: ambientBindings([acrHost]),
        loopbackOrigins: { [acrHost]: acr.origin },
        azureAuthorityCa: acr.authorityCa,
      },
      `${acrHost}/acme/shop`,
    );
    const after = acr.counts();
    figures[`registry.azure_entra_token_requests_per_${REQUESTS}_registry_requests.cached`] =
      after.entraTokens - before.entraTokens;
    figures[`registry.azure_acr_exchange_requests_per_${REQUESTS}_registry_requests.cached`] =
      after.exchanges - before.exchanges;
    figures[`registry.azure_acr_access_token_requests_per_${REQUESTS}_registry_requests.cached`] =
      after.accessTokens - before.accessTokens;
  } finally {
    await acrRegistry.close();
    await acr.close();
  }

  // A Docker credential helper: each run counted in a file.
  const dir = mkdtempSync(join(tmpdir(), "ferry-bench-helper-"));
  const helperRegistry = await startDistribution("basic", {
    users: { ci: "bench-helper-secret-0123456789" },
  });
  try {
    const host = "registry.bench.example";
    writeFileSync(
      join(dir, "docker-credential-ferrybench"),
      `#!/bin/sh\necho run >> "${join(dir, "runs")}"\nprintf '{"Username":"ci","Secret":"bench-helper-secret-0123456789"}'\n`,
    );
    chmodSync(join(dir, "docker-credential-ferrybench"), 0o755);
    writeFileSync(join(dir, "config.json"), JSON.stringify({ credHelpers: { [host]: "ferrybench" } }));
    process.env.PATH = `${dir}:${process.env.PATH ?? ""}`;
    await pushImage(helperRegistry.url, "acme/shop", "1.0.0", {
      auth: { username: "ci", password: "bench-helper-secret-0123456789" },
    });
    await overADay(
      () => undefined,
      {
        registries: { [host]: { auth: "dockerconfig" } },
        secretBindings: ambientBindings([host]),
        loopbackOrigins: { [host]: helperRegistry.url },
        dockerConfigPath: join(dir, "config.json"),
      },
      `${host}/acme/shop`,
    );
    figures[`registry.dockerconfig_helper_runs_per_${REQUESTS}_registry_requests.cached`] = readFileSync(
      join(dir, "runs"),
      "utf8",
    )
      .trim()
      .split("\n").length;
  } finally {
    await helperRegistry.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
