import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createRegistryClient, RegistryAuthError } from "../../../src/adapters/registry/index.js";
import { registryRuleProblems } from "../../../src/core/config/registry-rules.js";
import { ambientBindings, contextWithAmbient } from "../../support/ambient-bindings.js";
import { REDACTED, SecretRedactor } from "../../../src/core/redact.js";
import { pushImage } from "../../../packages/sandbox/src/registry/push-image.js";
import { ASSUMED_ACCESS_KEY_ID, startFakeEcr, type FakeEcr } from "../../support/cloud/fake-ecr.js";
import { startDistribution, type RunningDistribution } from "../../support/registry-distribution.js";

/**
 * `auth: aws` end to end: the AWS SDK's default credential chain reads the access key from the
 * environment, signs `GetAuthorizationToken` to a loopback fake of ECR's documented answer
 * (test/support/cloud/fake-ecr.ts cites the API reference), and the derived `AWS:<password>` is
 * what the real CNCF distribution registry (htpasswd) accepts or refuses.
 */

const HOST = "123456789012.dkr.ecr.us-east-1.amazonaws.com";
const PASSWORD = "ecr-password-canary-7f3c9a1e";
const REVOKED = "ecr-revoked-canary-0b6d2f84";
const ACCESS_KEY_ID = "AKIAFERRYTEST0000001";
const SECRET_ACCESS_KEY = "ferry-test-secret-access-key-canary";
const T0 = Date.parse("2026-01-01T00:00:00Z");
const TWELVE_HOURS = 12 * 3600_000;

let registry: RunningDistribution;
let ecr: FakeEcr;

beforeAll(async () => {
  registry = await startDistribution("basic", { users: { AWS: PASSWORD } });
  ecr = await startFakeEcr({
    proxyEndpoint: `https://${HOST}`,
    password: PASSWORD,
    expiresAt: new Date(T0 + TWELVE_HOURS),
  });
  for (const tag of ["1.0.0", "1.1.0", "1.2.0"])
    await pushImage(registry.url, "shop", tag, { auth: { username: "AWS", password: PASSWORD } });
});

afterAll(async () => {
  await ecr?.close();
  await registry?.close();
});

beforeEach(() => {
  vi.stubEnv("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID);
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY);
  vi.stubEnv("AWS_EC2_METADATA_DISABLED", "true");
  vi.stubEnv("AWS_CONFIG_FILE", "/nonexistent/ferry-aws-config");
  vi.stubEnv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/ferry-aws-credentials");
  ecr.set({ password: PASSWORD, expiresAt: new Date(T0 + TWELVE_HOURS) });
});

afterEach(() => {
  vi.unstubAllEnvs();
});

function client(clock: { now: number }, secrets = new SecretRedactor()) {
  return createRegistryClient({
    registries: { [HOST]: { auth: "aws" } },
    secretBindings: ambientBindings([HOST]),
    ecrEndpoint: ecr.url,
    loopbackOrigins: { [HOST]: registry.url },
    secrets,
    now: () => clock.now,
    limits: { tagCacheTtlMs: 0, maxRetries: 0 },
  });
}

describe("auth: aws (Amazon ECR)", () => {
  it("lists tags from the real registry with credentials derived through the AWS credential chain", async () => {
    const secrets = new SecretRedactor();
    const before = ecr.requests();
    const tags = await client({ now: T0 }, secrets).listTags(`${HOST}/shop`);
    expect(tags.sort()).toEqual(["1.0.0", "1.1.0", "1.2.0"]);
    expect(ecr.requests() - before).toBe(1);
    // Signed with the access key of Ferry's environment, and the derived password is a known secret.
    expect(ecr.accessKeyIds().at(-1)).toBe(ACCESS_KEY_ID);
    expect(secrets.redact(`x ${PASSWORD} x`)).toBe(`x ${REDACTED} x`);
  });

  it("fetches one token for many concurrent requests, and one more only shortly before it expires", async () => {
    const clock = { now: T0 };
    const registryClient = client(clock);
    const before = ecr.requests();
    const digests = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        registryClient.resolveDigest(`${HOST}/shop`, ["1.0.0", "1.1.0", "1.2.0"][i % 3]!),
      ),
    );
    expect(new Set(digests).size).toBe(3);
    expect(ecr.requests() - before).toBe(1);

    // Eleven hours on: still the cached token.
    clock.now = T0 + 11 * 3600_000;
    await registryClient.listTags(`${HOST}/shop`);
    expect(ecr.requests() - before).toBe(1);

    // Four minutes before expiry, concurrent requests share one refresh.
    ecr.set({ password: PASSWORD, expiresAt: new Date(T0 + 2 * TWELVE_HOURS) });
    clock.now = T0 + TWELVE_HOURS - 4 * 60_000;
    await Promise.all(Array.from({ length: 8 }, () => registryClient.listTags(`${HOST}/shop`)));
    expect(ecr.requests() - before).toBe(2);
  });

  it("explains a revoked credential in one line without the secret, and fetches again on the next cycle", async () => {
    const secrets = new SecretRedactor();
    const clock = { now: T0 };
    const registryClient = client(clock, secrets);
    ecr.set({ password: REVOKED, expiresAt: new Date(T0 + TWELVE_HOURS) });
    const before = ecr.requests();
    const error = await registryClient.listTags(`${HOST}/shop`).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RegistryAuthError);
    const message = (error as Error).message;
    expect(message).toBe(
      `${HOST}: unauthorized for shop after re-authenticating with auth: aws as the AWS default credential chain; the registry said UNAUTHORIZED`,
    );
    expect(secrets.redact(message)).toBe(message);
    expect(message).not.toContain(REVOKED);
    expect(ecr.requests() - before).toBe(1);

    // The next cycle, with the credential restored, asks ECR again and succeeds.
    ecr.set({ password: PASSWORD, expiresAt: new Date(T0 + TWELVE_HOURS) });
    // The refused token was dropped, although it had hours to live.
    await expect(registryClient.listTags(`${HOST}/shop`)).resolves.toHaveLength(3);
    expect(ecr.requests() - before).toBe(2);
  });

  it("names the provider, the identity and what AWS said when ECR refuses, and retries next time", async () => {
    const registryClient = client({ now: T0 });
    ecr.set({
      denied:
        "User: arn:aws:iam::123456789012:user/ferry is not authorized to perform: ecr:GetAuthorizationToken",
    });
    const before = ecr.requests();
    await expect(registryClient.listTags(`${HOST}/shop`)).rejects.toThrow(
      `${HOST}: auth: aws as the AWS default credential chain: ECR GetAuthorizationToken failed: AccessDeniedException: User: arn:aws:iam::123456789012:user/ferry is not authorized to perform: ecr:GetAuthorizationToken`,
    );
    ecr.set({ password: PASSWORD, expiresAt: new Date(T0 + TWELVE_HOURS) });
    await expect(registryClient.listTags(`${HOST}/shop`)).resolves.toHaveLength(3);
    expect(ecr.requests() - before).toBe(2);
  });

  it("assumes roleArn through STS first and signs the ECR call with the role's temporary credentials", async () => {
    const role = "arn:aws:iam::123456789012:role/ferry-pull";
    const registryClient = createRegistryClient({
      registries: { [HOST]: { auth: "aws", roleArn: role } },
      secretBindings: ambientBindings([HOST]),
      ecrEndpoint: ecr.url,
      loopbackOrigins: { [HOST]: registry.url },
      now: () => T0,
    });
    await expect(registryClient.listTags(`${HOST}/shop`)).resolves.toHaveLength(3);
    expect(ecr.assumedRoles().at(-1)).toBe(role);
    expect(ecr.accessKeyIds().at(-1)).toBe(ASSUMED_ACCESS_KEY_ID);
  });

  it("refuses a non-loopback origin override", async () => {
    await expect(
      createRegistryClient({ loopbackOrigins: { [HOST]: "http://10.0.0.5:5000" } }).listTags(`${HOST}/shop`),
    ).rejects.toThrow(/loopback origins only/);
  });
});

describe("auth: aws in the config", () => {
  const problems = (registries: Record<string, unknown>) =>
    registryRuleProblems(
      { images: {}, environments: {}, registries },
      contextWithAmbient([HOST, "registry.example.com"]),
    ).errors.map((problem) => `${problem.path.join(".")}: ${problem.message}`);

  it("accepts an ECR host with a role to assume", () => {
    expect(
      problems({ [HOST]: { auth: "aws", roleArn: "arn:aws:iam::123456789012:role/ferry-pull" } }),
    ).toEqual([]);
  });

  it("refuses a host that is not ECR, a secret named next to the provider, and plain HTTP", () => {
    expect(problems({ "registry.example.com": { auth: "aws" } })).toEqual([
      'registries.registry.example.com.auth: auth: aws is for Amazon ECR hosts (<account>.dkr.ecr.<region>.amazonaws.com), not "registry.example.com"',
    ]);
    expect(
      problems({
        [HOST]: { auth: "aws", username: "AWS", passwordEnv: "FERRY_REGISTRY_ECR", insecure: true },
      }),
    ).toEqual([
      `registries.${HOST}.username: auth: aws takes its credentials from the AWS credential chain of Ferry's environment; remove username`,
      `registries.${HOST}.passwordEnv: auth: aws takes its credentials from the AWS credential chain of Ferry's environment; remove passwordEnv`,
      `registries.${HOST}.insecure: auth: aws never sends ECR credentials over plain HTTP`,
    ]);
  });
});
