/**
 * The whole app under attack: the GitHub emulator with acme/config, the embedded registry (basic
 * auth) and the real Ferry server, with a canary in every credential Ferry is handed (webhook
 * secrets, the app's private key, the registry password, the installation tokens the emulator
 * issues). `scanEverything` greps all that Ferry wrote or said for them (row 25, G10).
 *
 * Modelled on test/support/app-e2e-world.ts; separate because that world's secrets are fixed strings.
 */
import { execFileSync } from "node:child_process";
import { Octokit } from "@octokit/rest";
import pino from "pino";
import {
  startFerryServer,
  type FerryServer,
  type FerryServerOptions,
} from "../../src/server/ferry-server.js";
import {
  startGitHubEmulator,
  type GitHubEmulator,
  accounts,
  inspect,
  repos,
} from "../../packages/sandbox/src/github/index.js";
import {
  startEmbeddedRegistry,
  type EmbeddedRegistry,
} from "../../packages/sandbox/src/registry/embedded-registry.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { configContextFromEnv, githubContainerRegistry } from "../../src/core/config/config-context.js";
import { shopOverlay } from "./app-fakes.js";
import type { CanaryWatch } from "./canary.js";
import { ferryAppManifest, UnthrottledOctokit } from "../../packages/sandbox/src/ferry-app.js";

export interface AppWorld {
  emu: GitHubEmulator;
  registry: EmbeddedRegistry;
  server: FerryServer;
  mona: Octokit;
  secrets: { webhook: string; registryWebhook: string; registryPassword: string };
  logs: string[];
  /** Extra Ferry servers (replicas) on the same emulator and registry. */
  startReplica(overrides?: Partial<FerryServerOptions>): Promise<FerryServer>;
  settle(): Promise<void>;
  push(tag: string): Promise<string>;
  /** Pushes without waiting for Ferry to react (to race pushes against other work). */
  pushOnly(tag: string): Promise<string>;
  pulls(): Promise<
    {
      number: number;
      title: string;
      state: string;
      head: { ref: string; sha: string };
      body: string | null;
    }[]
  >;
  /** Commits on `ferry/<env>` that are not on main. */
  branchCommits(env: string): Promise<string[]>;
  stagingTag(): Promise<string | undefined>;
  scanEverything(): Promise<void>;
  close(): Promise<void>;
}

const ferryConfig = (host: string) => `images:
  shop:
    repository: ${host}/acme/shop
    policy: { range: "^1.0.0" }
environments:
  staging:
    paths: [overlays/staging]
    update: auto
    merge: review
  prod:
    paths: [overlays/prod]
    from: staging
    update: manual
    merge: review
    promoters: { permission: maintain }
registries:
  ${host}: { username: ferry, passwordEnv: FERRY_REGISTRY_PASSWORD }
`;

export async function startAppWorld(
  canary: CanaryWatch,
  options: {
    server?: Partial<FerryServerOptions>;
    /** The host that stands for this GitHub's container registry (the one auth: github may name). */
    githubContainerRegistry?: string;
  } = {},
): Promise<AppWorld> {
  const secrets = {
    webhook: canary.secret("gh-webhook"),
    registryWebhook: canary.secret("registry-webhook"),
    registryPassword: canary.secret("registry-password"),
  };
  canary.plantBasic("ferry", secrets.registryPassword, "registry password");
  const emu = await startGitHubEmulator();
  const registry = await startEmbeddedRegistry({
    auth: { kind: "basic", users: { ferry: secrets.registryPassword } },
  });
  const auth = { username: "ferry", password: secrets.registryPassword };
  const mona = accounts.createUser(emu, "mona");
  accounts.createOrg(emu, "acme");
  await pushImage(registry.url, "acme/shop", "1.7.0", { content: "1.7.0", auth });
  await repos.createRepo(emu, "acme", "config", {
    files: {
      ".github/ferry.yml": ferryConfig(registry.host),
      "overlays/staging/kustomization.yaml": shopOverlay(registry.host, "1.7.0"),
      "overlays/staging/deployment.yaml": "kind: Deployment\n",
      "overlays/prod/kustomization.yaml": shopOverlay(registry.host, "1.7.0"),
      "overlays/prod/deployment.yaml": "kind: Deployment\n",
    },
    collaborators: { mona: "maintain" },
  });
  const app = accounts.createApp(emu, {
    slug: "ferry",
    permissions: ferryAppManifest().permissions,
    webhookSecret: secrets.webhook,
  });
  canary.plant(app.privateKey, "app private key");
  accounts.installApp(emu, app.id, "acme");
  const logs: string[] = [];
  const servers: FerryServer[] = [];
  const startReplica = async (overrides: Partial<FerryServerOptions> = {}): Promise<FerryServer> => {
    const server = await startFerryServer({
      appId: app.id,
      privateKey: app.privateKey,
      webhookSecret: secrets.webhook,
      baseUrl: emu.apiUrl,
      webUrl: emu.webUrl,
      Octokit: UnthrottledOctokit,
      scanIntervalMs: false,
      registrySecrets: { distribution: secrets.registryWebhook },
      registryCoalesceMs: 20,
      log: pino({ level: "debug" }, canary.sink("ferry log", logs)),
      ...options.server,
      ...overrides,
      ferry: {
        env: { FERRY_REGISTRY_PASSWORD: secrets.registryPassword },
        // As an operator binds it: the registry password goes to the world's registry, for acme.
        configContext: {
          githubContainerRegistry: options.githubContainerRegistry ?? githubContainerRegistry(emu.apiUrl),
          allowedEnv: [],
          refusePrivateRegistries: false,
          secretBindings: configContextFromEnv({
            FERRY_REGISTRY_PASSWORD_HOSTS: registry.host,
            FERRY_REGISTRY_PASSWORD_OWNERS: "acme",
          }).secretBindings,
        },
        ...options.server?.ferry,
        ...overrides.ferry,
      },
    });
    servers.push(server);
    return server;
  };
  const server = await startReplica();
  accounts.setWebhook(emu, app.id, `${server.url}/api/github/webhooks`, secrets.webhook);
  registry.addNotificationEndpoint({
    url: `${server.url}/registry/distribution`,
    headers: { Authorization: secrets.registryWebhook },
  });
  const monaKit = new Octokit({ baseUrl: emu.apiUrl, auth: mona.token, request: { retries: 0 } });

  const settle = async (): Promise<void> => {
    for (let round = 0; round < 6; round++) {
      await new Promise((resolve) => setTimeout(resolve, 60));
      await emu.idle();
      for (const each of servers) await each.idle();
    }
  };
  const world: AppWorld = {
    emu,
    registry,
    server,
    mona: monaKit,
    secrets,
    logs,
    startReplica,
    settle,
    async push(tag) {
      const { digest } = await pushImage(registry.url, "acme/shop", tag, { content: tag, auth });
      await settle();
      return digest;
    },
    // Read in-process, not over HTTP: the test's own reads must not consume injected faults.
    async pushOnly(tag) {
      return (await pushImage(registry.url, "acme/shop", tag, { content: tag, auth })).digest;
    },
    async pulls() {
      return (await inspect.listPulls(emu, "acme", "config", { state: "all" })) as unknown as Awaited<
        ReturnType<AppWorld["pulls"]>
      >;
    },
    async branchCommits(env) {
      const gitDir = emu.repo("acme", "config").git.gitDir;
      if (!(await inspect.branchSha(emu, "acme", "config", `ferry/${env}`))) return [];
      return execFileSync("git", ["--git-dir", gitDir, "rev-list", `main..ferry/${env}`], {
        encoding: "utf8",
      })
        .split("\n")
        .filter(Boolean);
    },
    async stagingTag() {
      const text = await inspect.readFile(
        emu,
        "acme",
        "config",
        "ferry/staging",
        "overlays/staging/kustomization.yaml",
      );
      return text ? /newTag: "?([^"\n]+)"?/.exec(text)?.[1] : undefined;
    },
    async scanEverything() {
      // Installation tokens the emulator issued to Ferry are credentials too.
      for (const token of emu.installationTokens.keys()) canary.plant(token, "installation token");
      const repo = emu.repo("acme", "config");
      // What Ferry writes to GitHub besides commits: issues and PRs (titles, bodies), comments,
      // check runs (output), statuses, reviews, deployments.
      const metadata = repo as unknown as Record<string, unknown>;
      for (const key of [
        "issues",
        "comments",
        "checkRuns",
        "checkSuites",
        "statuses",
        "reviews",
        "deployments",
        "deploymentStatuses",
      ]) {
        if (key in metadata) canary.scanObject(`emulator ${key}`, metadata[key]);
      }
      canary.scanGit("config repo commits", repo.git.gitDir);
      for (const delivery of emu.webhooks.deliveries())
        canary.scan(`webhook delivery ${delivery.id} error`, delivery.error);
      for (const line of logs) canary.scan("ferry log (rescan)", line);
    },
    async close() {
      for (const each of servers) await each.close();
      await registry.close();
      await emu.close();
    },
  };
  return world;
}
