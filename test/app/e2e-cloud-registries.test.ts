import { actAs } from "../../packages/sandbox/src/github/index.js";
/**
 * End to end with `auth: gcp`, `auth: azure` and `auth: dockerconfig` (an `auths` entry and a
 * credential helper): the config merged to the default branch names the cloud host and only the
 * provider; a new tag in the registry (the real CNCF registry standing in for the cloud's on
 * loopback, behind the provider's own token endpoints as loopback fakes) becomes a staging PR,
 * with credentials derived through the provider chain. Every token handed out is a canary: none
 * may reach a log line, a PR, a commit or `/status`. ECR's run is test/app/e2e-ecr.test.ts.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { createRegistryClient, type RegistryClientOptions } from "../../src/adapters/registry/index.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { DEFAULT_CONFIG_CONTEXT } from "../../src/core/config/config-context.js";
import { ambientBindings } from "../support/ambient-bindings.js";
import { startWorld, type World } from "../support/app-e2e-world.js";
import { CanaryWatch } from "../support/canary.js";
import { ACR_NULL_USER, acrRefreshToken, startFakeAcr, type FakeAcr } from "../support/cloud/fake-acr.js";
import { startFakeGceMetadata, type FakeGceMetadata } from "../support/cloud/fake-gce-metadata.js";
import { startDistribution, type RunningDistribution } from "../support/registry-distribution.js";

interface Provider {
  /** The cloud registry host the config names. */
  host: string;
  auth: string;
  /** Starts the fakes and the real registry; returns what the client needs and how to push. */
  start(canary: CanaryWatch): Promise<{
    origin: string;
    client: Partial<RegistryClientOptions>;
    push(tag: string): Promise<void>;
    /** Credentials handed out so far (planted as canaries before the scan). */
    handedOut(): string[];
    close(): Promise<void>;
  }>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const gcp: Provider = {
  host: "europe-west1-docker.pkg.dev",
  auth: "gcp",
  async start(canary) {
    const token = `ya29.${canary.secret("gcp-access-token")}`;
    const registry = await startDistribution("basic", { users: { oauth2accesstoken: token } });
    const metadata: FakeGceMetadata = await startFakeGceMetadata({ token, expiresIn: 3599 });
    vi.stubEnv("GCE_METADATA_HOST", metadata.host);
    vi.stubEnv("GOOGLE_APPLICATION_CREDENTIALS", "");
    vi.stubEnv("CLOUDSDK_CONFIG", "/nonexistent/ferry-gcloud");
    // The project is named, so google-auth-library does not run `gcloud config config-helper` (seconds) to find it.
    vi.stubEnv("GOOGLE_CLOUD_PROJECT", "ferry-test-project");
    return {
      origin: registry.url,
      client: {},
      push: (tag) =>
        pushImage(registry.url, "acme/shop", tag, {
          content: tag,
          auth: { username: "oauth2accesstoken", password: token },
        }).then(() => undefined),
      handedOut: () => [token],
      close: async () => {
        await metadata.close();
        await registry.close();
      },
    };
  },
};

const azure: Provider = {
  host: "ferrye2e.azurecr.io",
  auth: "azure",
  async start(canary) {
    const secret = canary.secret("azure-client-secret");
    const acr: FakeAcr = await startFakeAcr({
      host: "ferrye2e.azurecr.io",
      tenant: "11111111-2222-3333-4444-555555555555",
      clientId: "e2e00000-0000-0000-0000-00000000feed",
      clientSecret: secret,
    });
    const registry: RunningDistribution = await startDistribution("token", {
      tokenService: acr.tokenService,
    });
    acr.setUpstream(registry.url);
    vi.stubEnv("AZURE_TENANT_ID", acr.tenant);
    vi.stubEnv("AZURE_CLIENT_ID", acr.clientId);
    vi.stubEnv("AZURE_CLIENT_SECRET", secret);
    vi.stubEnv("AZURE_AUTHORITY_HOST", acr.authorityHost);
    vi.stubEnv("AZURE_TOKEN_CREDENTIALS", "EnvironmentCredential");
    const pushWith = async (tag: string) => {
      const refresh = await acrRefreshToken(acr, acr.tokenService.service);
      await pushImage(acr.origin, "acme/shop", tag, {
        content: tag,
        auth: { username: ACR_NULL_USER, password: refresh },
      });
    };
    return {
      origin: acr.origin,
      client: { azureAuthorityCa: acr.authorityCa },
      push: pushWith,
      handedOut: () => acr.issued(),
      close: async () => {
        await registry.close();
        await acr.close();
      },
    };
  },
};

/** A Docker config.json the operator gives Ferry: an `auths` entry, or a credential helper on PATH. */
function dockerConfig(kind: "auths" | "credHelpers"): Provider {
  return {
    host: "registry.internal.example:5000",
    auth: "dockerconfig",
    async start(canary) {
      const password = canary.secret(`dockerconfig-${kind}`);
      const registry = await startDistribution("basic", { users: { ci: password } });
      const dir = mkdtempSync(join(tmpdir(), "ferry-e2e-dockerconfig-"));
      const host = "registry.internal.example:5000";
      if (kind === "auths") {
        writeFileSync(
          join(dir, "config.json"),
          JSON.stringify({ auths: { [host]: { auth: Buffer.from(`ci:${password}`).toString("base64") } } }),
        );
      } else {
        writeFileSync(join(dir, "config.json"), JSON.stringify({ credHelpers: { [host]: "ferrye2e" } }));
        const helper = join(dir, "docker-credential-ferrye2e");
        writeFileSync(
          helper,
          `#!/bin/sh\n[ "$1" = get ] || exit 2\nread host\n[ "$host" = "${host}" ] || exit 1\nprintf '{"Username":"ci","Secret":"%s"}' "${password}"\n`,
        );
        chmodSync(helper, 0o755);
        vi.stubEnv("PATH", `${dir}:${process.env.PATH ?? ""}`);
      }
      return {
        origin: registry.url,
        client: { dockerConfigPath: join(dir, "config.json") },
        push: (tag) =>
          pushImage(registry.url, "acme/shop", tag, {
            content: tag,
            auth: { username: "ci", password },
          }).then(() => undefined),
        handedOut: () => [password],
        close: async () => {
          await registry.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

describe.each([
  ["auth: gcp (Artifact Registry)", gcp],
  ["auth: azure (Azure Container Registry)", azure],
  ["auth: dockerconfig with an auths entry", dockerConfig("auths")],
  ["auth: dockerconfig with a credential helper", dockerConfig("credHelpers")],
])("%s end to end", (_name, provider) => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    vi.unstubAllEnvs();
  });

  it("a new tag in the registry becomes a staging PR, with credentials derived through the provider, and no credential in logs, PRs, commits or /status", async () => {
    const canary = new CanaryWatch();
    const running = await provider.start(canary);
    cleanups.push(() => running.close());
    await running.push("1.7.0");
    const logs: string[] = [];
    world = await startWorld({
      ci: false,
      server: {
        log: pino({ level: "debug" }, canary.sink("ferry log", logs)),
        ferry: {
          sealKey: "e2e-seal",
          // The operator binds its credentials of this kind to the host, for acme.
          configContext: {
            ...DEFAULT_CONFIG_CONTEXT,
            secretBindings: ambientBindings([provider.host], "acme"),
          },
          // The product's client; only the cloud host's address (and the SDK's endpoint) is loopback.
          registryFor: (config) =>
            createRegistryClient({
              ...(config.registries ? { registries: config.registries } : {}),
              secretBindings: ambientBindings([provider.host], "acme"),
              secretOwner: "acme",
              ...running.client,
              identityEnv: process.env,
              loopbackOrigins: { [provider.host]: running.origin },
            }),
        },
      },
    });
    const repository = `${provider.host}/acme/shop`;
    await actAs.commit(
      world.emu,
      "acme",
      "config",
      "main",
      {
        ".github/ferry.yml": `images:\n  shop:\n    repository: ${repository}\n    policy: { range: "^1.0.0" }\nenvironments:\n  staging:\n    paths: [overlays/staging]\n    update: auto\nregistries:\n  "${provider.host}": { auth: ${provider.auth} }\n`,
        "overlays/staging/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - deployment.yaml\nimages:\n  - name: ${repository}\n    newTag: "1.7.0"\n`,
      },
      "images from the cloud registry",
      { as: "mona" },
    );
    await world.settle();
    await running.push("1.8.0");
    await world.server.scanNow();
    await world.settle();
    const pulls = await world.pulls("open");
    expect(pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);

    for (const credential of running.handedOut()) canary.plant(credential, `${provider.auth} credential`);
    canary.scanObject("pull requests", pulls);
    canary.scan("GET /status", await (await fetch(`${world.server.url}/status`)).text());
    canary.scanGit("config repo commits", world.emu.repo("acme", "config").git.gitDir);
    for (const line of logs) canary.scan("ferry log (rescan)", line);
    expect(logs.length).toBeGreaterThan(0);
    expect(canary.hits).toEqual([]);
  });
});

describe("a revoked credential end to end", () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    vi.unstubAllEnvs();
  });

  it("auth: gcp with a token the registry refuses: a clear error in the log, nothing written, and the next cycle after restoring opens the PR", async () => {
    const canary = new CanaryWatch();
    const token = `ya29.${canary.secret("gcp-access-token")}`;
    const revoked = `ya29.${canary.secret("gcp-revoked-token")}`;
    const registry = await startDistribution("basic", { users: { oauth2accesstoken: token } });
    const metadata = await startFakeGceMetadata({ token, expiresIn: 3599 });
    cleanups.push(
      () => metadata.close(),
      () => registry.close(),
    );
    vi.stubEnv("GCE_METADATA_HOST", metadata.host);
    vi.stubEnv("GOOGLE_APPLICATION_CREDENTIALS", "");
    vi.stubEnv("CLOUDSDK_CONFIG", "/nonexistent/ferry-gcloud");
    vi.stubEnv("GOOGLE_CLOUD_PROJECT", "ferry-test-project");
    const auth = { username: "oauth2accesstoken", password: token };
    await pushImage(registry.url, "acme/shop", "1.7.0", { content: "1.7.0", auth });
    const logs: string[] = [];
    world = await startWorld({
      ci: false,
      server: {
        log: pino({ level: "debug" }, canary.sink("ferry log", logs)),
        ferry: {
          sealKey: "e2e-seal",
          configContext: { ...DEFAULT_CONFIG_CONTEXT, secretBindings: ambientBindings([gcp.host], "acme") },
          registryFor: (config) =>
            createRegistryClient({
              ...(config.registries ? { registries: config.registries } : {}),
              secretBindings: ambientBindings([gcp.host], "acme"),
              secretOwner: "acme",
              loopbackOrigins: { [gcp.host]: registry.url },
            }),
        },
      },
    });
    const repository = `${gcp.host}/acme/shop`;
    await actAs.commit(
      world.emu,
      "acme",
      "config",
      "main",
      {
        ".github/ferry.yml": `images:\n  shop:\n    repository: ${repository}\n    policy: { range: "^1.0.0" }\nenvironments:\n  staging:\n    paths: [overlays/staging]\n    update: auto\nregistries:\n  "${gcp.host}": { auth: gcp }\n`,
        "overlays/staging/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - deployment.yaml\nimages:\n  - name: ${repository}\n    newTag: "1.7.0"\n`,
      },
      "images from Artifact Registry",
      { as: "mona" },
    );
    await world.settle();
    const branchesBefore = (await world.as.mona.rest.repos.listBranches({ owner: "acme", repo: "config" }))
      .data.length;

    // The service account's token is revoked: the metadata server hands out one the registry refuses.
    metadata.set({ token: revoked, expiresIn: 3599 });
    await pushImage(registry.url, "acme/shop", "1.8.0", { content: "1.8.0", auth });
    const asked = metadata.tokenRequests();
    await world.server.scanNow();
    await world.settle();
    expect(metadata.tokenRequests()).toBeGreaterThan(asked);
    expect(await world.pulls("all")).toEqual([]);
    expect(
      (await world.as.mona.rest.repos.listBranches({ owner: "acme", repo: "config" })).data,
    ).toHaveLength(branchesBefore);
    expect(logs.join("\n")).toContain(
      `${gcp.host}: unauthorized for acme/shop after re-authenticating with auth: gcp as Google Application Default Credentials; the registry said UNAUTHORIZED`,
    );

    // Restored: the next cycle asks again and opens the PR.
    metadata.set({ token, expiresIn: 3599 });
    await world.server.scanNow();
    await world.settle();
    expect((await world.pulls("open")).map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);
    canary.scan("GET /status", await (await fetch(`${world.server.url}/status`)).text());
    for (const line of logs) canary.scan("ferry log (rescan)", line);
    expect(canary.hits).toEqual([]);
  });
});
