/**
 * The credential cache's figure: requests to the token endpoint (ECR `GetAuthorizationToken`, a
 * loopback fake of its documented answer) per 1,000 registry requests to the real CNCF registry,
 * 10 at a time, spread over a simulated day (ECR tokens live 12 hours), with and without the cache.
 */
import { createRegistryClient } from "../../src/adapters/registry/index.js";
import { pushImage } from "../../src/sandbox/registry/push-image.js";
import { startFakeEcr } from "../support/cloud/fake-ecr.js";
import { distributionMissingMessage, startDistribution } from "../support/registry-distribution.js";
import { BenchSkipped } from "./skipped.js";

const HOST = "123456789012.dkr.ecr.us-east-1.amazonaws.com";
const PASSWORD = "bench-ecr-password-0123456789";
const REQUESTS = 1000;
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
        ecrEndpoint: ecr.url,
        loopbackOrigins: { [HOST]: registry.url },
        now: () => clock.now,
        limits: { tagCacheTtlMs: 0 },
      });
    return {
      "registry.ecr_token_requests_per_1000_registry_requests.cached": await run(true),
      "registry.ecr_token_requests_per_1000_registry_requests.uncached": await run(false),
    };
  } finally {
    await ecr.close();
    await registry.close();
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}
