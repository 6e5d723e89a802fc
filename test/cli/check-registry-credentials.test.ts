import { chmodSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { RegistryClientOptions } from "../../src/adapters/registry/index.js";
import { runCheck } from "../../src/cli/check.js";
import { runPlan } from "../../src/cli/plan.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { ACR_NULL_USER, acrRefreshToken, startFakeAcr, type FakeAcr } from "../support/cloud/fake-acr.js";
import { startFakeEcr, type FakeEcr } from "../support/cloud/fake-ecr.js";
import { startFakeGceMetadata, type FakeGceMetadata } from "../support/cloud/fake-gce-metadata.js";
import { startDistribution, type RunningDistribution } from "../support/registry-distribution.js";
import { ambientBindingEnv } from "../support/ambient-bindings.js";
import { captureIo } from "../support/cli-io.js";

/**
 * `ferry check` reads each registry of `registries:` once with the credentials this environment
 * derives for it (the same client as the App and `ferry plan`), and explains a refused credential
 * in one line: which provider, which identity, what the registry (or the provider) said, and no
 * secret. Each provider runs through its SDK against the loopback fakes in test/support/cloud/,
 * in front of the real CNCF registry.
 */

const ECR = "123456789012.dkr.ecr.eu-central-1.amazonaws.com";
const GCP = "us-docker.pkg.dev";
const ACR = "ferrycheck.azurecr.io";
const DOCKER = "registry.corp.example";
const BASIC = "harbor.corp.example";
const ECR_PASSWORD = "check-ecr-password-canary-1a2b";
const GCP_TOKEN = "ya29.check-gcp-token-canary-3c4d";
const AZURE_SECRET = "check-azure-secret-canary-5e6f";
const DOCKER_PASSWORD = "check-docker-password-canary-7a8b";
const BASIC_PASSWORD = "check-basic-password-canary-9c0d";
const TENANT = "0f0e0d0c-0b0a-0908-0706-050403020100";
const CLIENT_ID = "c0ffee00-0000-4000-8000-00000000c4ec";

let basic: RunningDistribution;
let acrRegistry: RunningDistribution;
let ecr: FakeEcr;
let gce: FakeGceMetadata;
let acr: FakeAcr;
let dir: string;

beforeAll(async () => {
  basic = await startDistribution("basic", {
    users: { AWS: ECR_PASSWORD, oauth2accesstoken: GCP_TOKEN, ci: DOCKER_PASSWORD, robot: BASIC_PASSWORD },
  });
  await pushImage(basic.url, "acme/shop", "1.0.0", { auth: basic.credentials });
  ecr = await startFakeEcr({
    proxyEndpoint: `https://${ECR}`,
    password: ECR_PASSWORD,
    expiresAt: new Date(Date.now() + 12 * 3600_000),
  });
  gce = await startFakeGceMetadata({ token: GCP_TOKEN, expiresIn: 3599 });
  acr = await startFakeAcr({ host: ACR, tenant: TENANT, clientId: CLIENT_ID, clientSecret: AZURE_SECRET });
  acrRegistry = await startDistribution("token", { tokenService: acr.tokenService });
  acr.setUpstream(acrRegistry.url);
  dir = mkdtempSync(join(tmpdir(), "ferry-check-credentials-"));
  stubProviderEnv();
  await pushImage(acr.origin, "acme/shop", "1.0.0", {
    auth: { username: ACR_NULL_USER, password: await acrRefreshToken(acr, ACR) },
  });
  vi.unstubAllEnvs();
});

afterAll(async () => {
  await Promise.all([basic?.close(), acrRegistry?.close(), ecr?.close(), gce?.close(), acr?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

afterEach(() => vi.unstubAllEnvs());

function stubProviderEnv(azureSecret = AZURE_SECRET): void {
  vi.stubEnv("AWS_ACCESS_KEY_ID", "AKIAFERRYCHECK000001");
  vi.stubEnv("AWS_SECRET_ACCESS_KEY", "check-aws-secret-access-key-canary");
  vi.stubEnv("AWS_EC2_METADATA_DISABLED", "true");
  vi.stubEnv("AWS_CONFIG_FILE", "/nonexistent/ferry-aws-config");
  vi.stubEnv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/ferry-aws-credentials");
  vi.stubEnv("GCE_METADATA_HOST", gce.host);
  vi.stubEnv("GOOGLE_APPLICATION_CREDENTIALS", "");
  vi.stubEnv("CLOUDSDK_CONFIG", "/nonexistent/ferry-gcloud");
  // The project is named, so google-auth-library does not run `gcloud config config-helper` (seconds) to find it.
  vi.stubEnv("GOOGLE_CLOUD_PROJECT", "ferry-test-project");
  vi.stubEnv("AZURE_TENANT_ID", TENANT);
  vi.stubEnv("AZURE_CLIENT_ID", CLIENT_ID);
  vi.stubEnv("AZURE_CLIENT_SECRET", azureSecret);
  vi.stubEnv("AZURE_AUTHORITY_HOST", acr.authorityHost);
  vi.stubEnv("AZURE_TOKEN_CREDENTIALS", "EnvironmentCredential");
  // Where the credential helper of the dockerconfig case is (helpers run with Ferry's environment).
  vi.stubEnv("PATH", `${join(dir, "helper")}:${process.env.PATH ?? ""}`);
}

/** A config repo checkout whose one image is on `host`, with `registries.<host>: <settings>`. */
function checkout(host: string, settings: string): string {
  const root = mkdtempSync(join(dir, "repo-"));
  mkdirSync(join(root, ".github"));
  mkdirSync(join(root, "overlays/staging"), { recursive: true });
  writeFileSync(
    join(root, ".github/ferry.yml"),
    `images:\n  shop:\n    repository: ${host}/acme/shop\nenvironments:\n  staging:\n    paths: [overlays/staging]\nregistries:\n  ${host}: ${settings}\n`,
  );
  writeFileSync(
    join(root, "overlays/staging/kustomization.yaml"),
    `images:\n- name: ${host}/acme/shop\n  newTag: 0.9.0\n`,
  );
  return root;
}

async function ferry(
  command: typeof runCheck,
  args: string[],
  root: string,
  overrides: Partial<RegistryClientOptions>,
  env: Record<string, string | undefined> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const io = captureIo(root, { env: { ...process.env, ...env } });
  return { code: await command(args, io, overrides), stdout: io.out, stderr: io.err };
}

interface Case {
  name: string;
  host: string;
  settings: string;
  overrides: () => Partial<RegistryClientOptions>;
  env?: () => Record<string, string | undefined>;
  /** Breaks the credential; returns what the one line must say, and the secrets it must not carry. */
  breakIt: () => { line: RegExp; secrets: string[] };
  restore: () => void;
}

/** A config.json naming a credential helper that answers the secret in helper/secret (restore() writes it). */
function dockerConfigPath(): string {
  const helperDir = join(dir, "helper");
  mkdirSync(helperDir, { recursive: true });
  const helper = join(helperDir, "docker-credential-ferrycheck");
  writeFileSync(
    helper,
    `#!/bin/sh\n[ "$1" = get ] || exit 2\nread host\nprintf '{"Username":"ci","Secret":"%s"}' "$(cat ${join(helperDir, "secret")})"\n`,
  );
  chmodSync(helper, 0o755);
  const path = join(helperDir, "config.json");
  writeFileSync(path, JSON.stringify({ credHelpers: { [DOCKER]: "ferrycheck" } }));
  return path;
}

const cases: Case[] = [
  {
    name: "auth: aws",
    host: ECR,
    settings: "{ auth: aws }",
    overrides: () => ({ ecrEndpoint: ecr.url, loopbackOrigins: { [ECR]: basic.url } }),
    breakIt: () => {
      ecr.set({
        denied:
          "User: arn:aws:iam::123456789012:user/ferry-ci is not authorized to perform: ecr:GetAuthorizationToken with an explicit deny",
      });
      return {
        line: new RegExp(
          `^\\.github/ferry\\.yml:8:3 ${ECR.replace(/\./g, "\\.")}: auth: aws as the AWS default credential chain: ECR GetAuthorizationToken failed: AccessDeniedException: User: arn:aws:iam::123456789012:user/ferry-ci is not authorized`,
        ),
        secrets: [ECR_PASSWORD, "check-aws-secret-access-key-canary"],
      };
    },
    restore: () => ecr.set({ password: ECR_PASSWORD, expiresAt: new Date(Date.now() + 12 * 3600_000) }),
  },
  {
    name: "auth: aws with a revoked ECR password",
    host: ECR,
    settings: "{ auth: aws }",
    overrides: () => ({ ecrEndpoint: ecr.url, loopbackOrigins: { [ECR]: basic.url } }),
    breakIt: () => {
      ecr.set({ password: "check-ecr-revoked-canary-0000", expiresAt: new Date(Date.now() + 3600_000) });
      return {
        line: new RegExp(
          `^\\.github/ferry\\.yml:8:3 ${ECR.replace(/\./g, "\\.")}: unauthorized for acme/shop after re-authenticating with auth: aws as the AWS default credential chain; the registry said UNAUTHORIZED$`,
        ),
        secrets: ["check-ecr-revoked-canary-0000", ECR_PASSWORD],
      };
    },
    restore: () => ecr.set({ password: ECR_PASSWORD, expiresAt: new Date(Date.now() + 12 * 3600_000) }),
  },
  {
    name: "auth: gcp",
    host: GCP,
    settings: "{ auth: gcp }",
    overrides: () => ({ loopbackOrigins: { [GCP]: basic.url } }),
    breakIt: () => {
      gce.set({ token: "ya29.check-gcp-revoked-canary", expiresIn: 3599 });
      return {
        line: new RegExp(
          `^\\.github/ferry\\.yml:8:3 ${GCP.replace(/\./g, "\\.")}: unauthorized for acme/shop after re-authenticating with auth: gcp as Google Application Default Credentials; the registry said UNAUTHORIZED$`,
        ),
        secrets: ["ya29.check-gcp-revoked-canary", GCP_TOKEN],
      };
    },
    restore: () => gce.set({ token: GCP_TOKEN, expiresIn: 3599 }),
  },
  {
    name: "auth: azure",
    host: ACR,
    settings: "{ auth: azure }",
    overrides: () => ({ azureAuthorityCa: acr.authorityCa, loopbackOrigins: { [ACR]: acr.origin } }),
    breakIt: () => {
      vi.stubEnv("AZURE_CLIENT_SECRET", "check-azure-wrong-secret-canary");
      return {
        line: new RegExp(
          `^\\.github/ferry\\.yml:8:3 ${ACR.replace(/\./g, "\\.")}: auth: azure as Entra client ${CLIENT_ID} in tenant ${TENANT}: no Entra ID token: AuthenticationError: AADSTS7000215: Invalid client secret provided`,
        ),
        secrets: ["check-azure-wrong-secret-canary", AZURE_SECRET],
      };
    },
    restore: () => vi.stubEnv("AZURE_CLIENT_SECRET", AZURE_SECRET),
  },
  {
    name: "auth: dockerconfig (credential helper)",
    host: DOCKER,
    settings: "{ auth: dockerconfig }",
    overrides: () => ({ loopbackOrigins: { [DOCKER]: basic.url } }),
    env: () => ({ FERRY_DOCKER_CONFIG: dockerConfigPath() }),
    breakIt: () => {
      writeFileSync(join(dir, "helper", "secret"), "check-docker-revoked-canary");
      return {
        line: new RegExp(
          `^\\.github/ferry\\.yml:8:3 ${DOCKER.replace(/\./g, "\\.")}: unauthorized for acme/shop after re-authenticating with auth: dockerconfig from ${join(dir, "helper", "config.json").replace(/[./]/g, "\\$&")}; the registry said UNAUTHORIZED$`,
        ),
        secrets: ["check-docker-revoked-canary", DOCKER_PASSWORD],
      };
    },
    restore: () => {
      mkdirSync(join(dir, "helper"), { recursive: true });
      writeFileSync(join(dir, "helper", "secret"), DOCKER_PASSWORD);
    },
  },
  {
    name: "username + passwordEnv",
    host: BASIC,
    settings: "{ username: robot, passwordEnv: FERRY_REGISTRY_HARBOR }",
    overrides: () => ({ loopbackOrigins: { [BASIC]: basic.url } }),
    env: () => ({
      FERRY_REGISTRY_HARBOR: process.env.FERRY_TEST_HARBOR ?? BASIC_PASSWORD,
      FERRY_REGISTRY_HARBOR_HOSTS: BASIC,
    }),
    breakIt: () => {
      vi.stubEnv("FERRY_TEST_HARBOR", "check-basic-wrong-canary");
      return {
        line: new RegExp(
          `^\\.github/ferry\\.yml:8:3 ${BASIC.replace(/\./g, "\\.")}: unauthorized for acme/shop after re-authenticating with user robot with FERRY_REGISTRY_HARBOR; the registry said UNAUTHORIZED$`,
        ),
        secrets: ["check-basic-wrong-canary", BASIC_PASSWORD],
      };
    },
    restore: () => vi.stubEnv("FERRY_TEST_HARBOR", BASIC_PASSWORD),
  },
];

/** The case's environment, with the ambient credentials bound to its host (the CLI's binding). */
const env = (c: Case) => ({ ...ambientBindingEnv([c.host]), ...c.env?.() });

describe("ferry check reads each configured registry with its credentials", () => {
  it.each(cases)(
    "$name: ok with the credential, one line naming provider, identity and answer without it, ok again once restored",
    async (c) => {
      stubProviderEnv();
      c.restore();
      const root = checkout(c.host, c.settings);
      const good = await ferry(runCheck, [], root, c.overrides(), env(c));
      expect(good.stdout).toBe(
        ".github/ferry.yml: ok (1 image, 1 environment, 1 registry read with their credentials)\n",
      );
      expect(good.code).toBe(0);

      const { line, secrets } = c.breakIt();
      const bad = await ferry(runCheck, [], root, c.overrides(), env(c));
      expect(bad.code).toBe(1);
      const lines = bad.stdout.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(line);
      for (const secret of secrets) expect(bad.stdout + bad.stderr).not.toContain(secret);

      // --offline skips the registry; restored, the next run passes (nothing was cached across runs).
      expect((await ferry(runCheck, ["--offline"], root, c.overrides(), env(c))).code).toBe(0);
      c.restore();
      expect((await ferry(runCheck, [], root, c.overrides(), env(c))).code).toBe(0);
    },
  );

  it.each(cases.filter((c) => c.settings.startsWith("{ auth:")))(
    "$name: refused at its line when the operator has not bound it to the host",
    async (c) => {
      stubProviderEnv();
      c.restore();
      const kind = /auth: (\w+)/.exec(c.settings)![1]!;
      const name = kind === "dockerconfig" ? "FERRY_DOCKER_CONFIG" : `FERRY_CLOUD_AUTH_${kind.toUpperCase()}`;
      const root = checkout(c.host, c.settings);
      for (const bound of [{}, { [`${name}_HOSTS`]: "elsewhere.example.com" }]) {
        const result = await ferry(runCheck, [], root, c.overrides(), { ...c.env?.(), ...bound });
        expect(result.code).toBe(1);
        expect(result.stdout).toContain(`.github/ferry.yml:8:`);
        expect(result.stdout).toContain(`auth: ${kind} uses the operator's own credentials: ${name} is`);
        expect(result.stdout).not.toContain("read with their credentials");
      }
    },
  );

  it("does not probe auth: github (the installation token lives only in the App)", async () => {
    const root = checkout("ghcr.io", "{ auth: github }");
    const result = await ferry(runCheck, [], root, {});
    expect(result.stdout).toContain(".github/ferry.yml: ok (1 image, 1 environment)\n");
    expect(result.code).toBe(0);
  });
});

describe("ferry plan uses the same credentials", () => {
  it("plans from ACR with auth: azure, and names the provider and identity when Entra ID refuses", async () => {
    stubProviderEnv();
    const root = checkout(ACR, "{ auth: azure }");
    const overrides = { azureAuthorityCa: acr.authorityCa, loopbackOrigins: { [ACR]: acr.origin } };
    const planned = await ferry(runPlan, [], root, overrides, ambientBindingEnv([ACR]));
    expect(planned.stdout).toMatch(
      /^staging {2}shop {2}overlays\/staging\/kustomization\.yaml:3 {2}0\.9\.0 -> 1\.0\.0 /,
    );
    expect(planned.code).toBe(0);

    vi.stubEnv("AZURE_CLIENT_SECRET", "plan-azure-wrong-secret-canary");
    const refused = await ferry(runPlan, [], root, overrides, ambientBindingEnv([ACR]));
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(
      `auth: azure as Entra client ${CLIENT_ID} in tenant ${TENANT}: no Entra ID token: AuthenticationError: AADSTS7000215`,
    );
    expect(refused.stdout + refused.stderr).not.toContain("plan-azure-wrong-secret-canary");
  });
});
