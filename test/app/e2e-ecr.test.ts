/**
 * End to end with `auth: aws`: the config merged to the default branch names an ECR host and only
 * the provider; a new tag in the registry (the real CNCF registry standing in for ECR on loopback,
 * accepting the `AWS:<password>` that a loopback fake of ECR's GetAuthorizationToken hands out
 * to the AWS SDK's default credential chain) becomes a staging PR.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createRegistryClient } from "../../src/adapters/registry/index.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { DEFAULT_CONFIG_CONTEXT } from "../../src/core/config/config-context.js";
import { ambientBindings } from "../support/ambient-bindings.js";
import { startWorld, type World } from "../support/app-e2e-world.js";
import { shopOverlay } from "../support/app-fakes.js";
import { startFakeEcr, type FakeEcr } from "../support/cloud/fake-ecr.js";
import { startDistribution, type RunningDistribution } from "../support/registry-distribution.js";
import { actAs } from "../../packages/sandbox/src/github/index.js";

const ECR = "123456789012.dkr.ecr.eu-west-1.amazonaws.com";
const PASSWORD = "e2e-ecr-password-canary-5d1e";

describe("auth: aws end to end", () => {
  let registry: RunningDistribution;
  let ecr: FakeEcr;
  let world: World;

  beforeAll(async () => {
    registry = await startDistribution("basic", { users: { AWS: PASSWORD } });
    ecr = await startFakeEcr({
      proxyEndpoint: `https://${ECR}`,
      password: PASSWORD,
      expiresAt: new Date(Date.now() + 12 * 3600_000),
    });
    await pushImage(registry.url, "acme/shop", "1.7.0", { auth: { username: "AWS", password: PASSWORD } });
  });
  afterAll(async () => {
    await ecr?.close();
    await registry?.close();
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    await world?.close();
  });

  it("a new tag in the ECR registry becomes a staging PR, with credentials derived through the AWS chain", async () => {
    vi.stubEnv("AWS_ACCESS_KEY_ID", "AKIAFERRYE2E00000001");
    vi.stubEnv("AWS_SECRET_ACCESS_KEY", "ferry-e2e-secret-access-key-canary");
    vi.stubEnv("AWS_EC2_METADATA_DISABLED", "true");
    vi.stubEnv("AWS_CONFIG_FILE", "/nonexistent/ferry-aws-config");
    vi.stubEnv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/ferry-aws-credentials");
    world = await startWorld({
      ci: false,
      server: {
        ferry: {
          sealKey: "e2e-seal",
          // The operator binds its AWS identity to the ECR host, for acme.
          configContext: { ...DEFAULT_CONFIG_CONTEXT, secretBindings: ambientBindings([ECR], "acme") },
          // The product's client; only the ECR endpoint and the ECR host's address are loopback.
          registryFor: (config) =>
            createRegistryClient({
              ...(config.registries ? { registries: config.registries } : {}),
              secretBindings: ambientBindings([ECR], "acme"),
              secretOwner: "acme",
              ecrEndpoint: ecr.url,
              loopbackOrigins: { [ECR]: registry.url },
            }),
        },
      },
    });
    const overlay = (tag: string) => shopOverlay(ECR, tag);
    await actAs.commit(
      world.emu,
      "acme",
      "config",
      "main",
      {
        ".github/ferry.yml": `images:\n  shop:\n    repository: ${ECR}/acme/shop\n    policy: { range: "^1.0.0" }\nenvironments:\n  staging:\n    paths: [overlays/staging]\n    update: auto\nregistries:\n  ${ECR}: { auth: aws }\n`,
        "overlays/staging/kustomization.yaml": overlay("1.7.0"),
      },
      "images from ECR",
      { as: "mona" },
    );
    await world.settle();
    const before = ecr.requests();
    await pushImage(registry.url, "acme/shop", "1.8.0", {
      content: "1.8.0",
      auth: { username: "AWS", password: PASSWORD },
    });
    await world.server.scanNow();
    await world.settle();
    const pulls = await world.pulls("open");
    expect(pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);
    expect(ecr.requests()).toBeGreaterThan(before);
    expect(ecr.accessKeyIds().at(-1)).toBe("AKIAFERRYE2E00000001");
    expect(JSON.stringify(pulls)).not.toContain(PASSWORD);
  });
});
