/**
 * Starts every part of the sandbox on loopback, with no network and no credentials from the
 * machine: the GitHub emulator (acme/shop, acme/shop-config, users mona/hubot/eve/octocat, the Ferry app
 * installed on acme), the embedded registry holding shop:1.7.3 (which passed CI in acme/shop),
 * the cluster simulator with the staging and prod namespaces, the real Ferry server and one
 * reconciler per environment. Everything lives under one folder in os.tmpdir(), removed on close.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import pino from "pino";
import {
  parseImageRef,
  startFerryServer,
  type FerryServer,
  startReconciler,
  type RunningReconciler,
} from "../../../../src/embedding.js";
import { startClusterSimulator, type ClusterSimulator } from "../cluster/cluster-simulator.js";
import { startGitHubEmulator, type GitHubEmulator, accounts, actAs, repos } from "../github/index.js";
import { startEmbeddedRegistry, type EmbeddedRegistry } from "../registry/embedded-registry.js";
import { pushImage } from "../registry/push-image.js";
import {
  APP_REPO,
  appRepoFiles,
  CONFIG_REPO,
  ENVIRONMENTS,
  FIRST_VERSION,
  IMAGE_PATH,
  OWNER,
  REQUIRED_CHECK,
  configRepoFiles,
  type EnvironmentName,
} from "./story-repos.js";
import { ferryAppManifest, UnthrottledOctokit } from "../ferry-app.js";

/** `octocat` administers both repositories (settings, branch protection), as an org admin would. */
export type SandboxUser = "mona" | "hubot" | "eve" | "octocat";

export interface SandboxWorld {
  workDir: string;
  emu: GitHubEmulator;
  registry: EmbeddedRegistry;
  cluster: ClusterSimulator;
  ferry: FerryServer;
  reconcilers: Record<EnvironmentName, RunningReconciler>;
  users: Record<SandboxUser, { login: string; token: string }>;
  /** Octokit clients acting as each user, against the emulator. */
  as: Record<SandboxUser, Octokit>;
  /** The app's bot login (`ferry[bot]`): who Ferry's comments, reactions and merges are by. */
  botLogin: string;
  /** Aborted by `abort()` or `close()`: waits on the world end early. */
  signal: AbortSignal;
  abort(): void;
  /** Pushes a release: a commit in acme/shop, its CI run, then the image labelled with that commit. */
  release(version: string): Promise<{ digest: string; revision: string }>;
  close(): Promise<void>;
}

export interface SandboxWorldOptions {
  /** Where Probot's warnings and errors go (never stdout: the timeline owns it). */
  log?: (text: string) => void;
  /** Reconciler cadence; short so the story runs in seconds. */
  reconcileIntervalMs?: number;
  /** Ferry's periodic registry scan (the backstop for a lost notification); off by default. */
  scanIntervalMs?: number | false;
  /** How long Ferry reuses one `/status` answer (default 10 s); a test waiting on it may shorten it. */
  statusTtlMs?: number;
}

const WEBHOOK_SECRET = "sandbox-webhook-secret";
const REGISTRY_NOTIFICATION_SECRET = "sandbox-registry-notification-secret";

export async function startSandboxWorld(options: SandboxWorldOptions = {}): Promise<SandboxWorld> {
  const workDir = await mkdtemp(join(tmpdir(), "ferry-sandbox-"));
  const stopping = new AbortController();
  // Started parts, closed in reverse order if a later one fails to start.
  const closers: (() => Promise<void>)[] = [() => rm(workDir, { recursive: true, force: true })];
  const closeAll = async (): Promise<void> => {
    stopping.abort();
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  };
  try {
    const emu = await startGitHubEmulator({ dataDir: join(workDir, "github") });
    closers.push(() => emu.close());
    const registry = await startEmbeddedRegistry();
    closers.push(() => registry.close());

    const users = {
      mona: accounts.createUser(emu, "mona", { name: "Mona Lisa Octocat" }),
      hubot: accounts.createUser(emu, "hubot", { name: "Hubot" }),
      eve: accounts.createUser(emu, "eve", { name: "Eve" }),
      octocat: accounts.createUser(emu, "octocat", { name: "The Octocat" }),
    };
    accounts.createOrg(emu, OWNER);
    const collaborators = { mona: "maintain", hubot: "write", octocat: "admin" } as const;
    const appRepo = await repos.createRepo(emu, OWNER, APP_REPO, { files: appRepoFiles(), collaborators });
    await repos.createRepo(emu, OWNER, CONFIG_REPO, {
      files: configRepoFiles(registry.host),
      collaborators,
      allowAutoMerge: true,
      deleteBranchOnMerge: true,
    });
    repos.protectBranch(emu, OWNER, CONFIG_REPO, "main", { requiredChecks: [REQUIRED_CHECK] });
    // CI takes a moment, so Ferry finds the check pending and turns on native auto-merge.
    actAs.setCi(emu, OWNER, CONFIG_REPO, { context: REQUIRED_CHECK, conclusion: "success", delayMs: 1500 });

    const release = async (
      version: string,
      message = `Release ${version}`,
    ): Promise<{ digest: string; revision: string }> => {
      const revision =
        version === FIRST_VERSION
          ? appRepo.headSha
          : await actAs.commit(emu, OWNER, APP_REPO, "main", { VERSION: `${version}\n` }, message, {
              as: "mona",
            });
      await actAs.completeWorkflowRun(emu, OWNER, APP_REPO, revision, "success", { name: "CI" });
      const { digest } = await pushImage(registry.url, IMAGE_PATH, version, {
        content: version,
        labels: {
          "org.opencontainers.image.revision": revision,
          "org.opencontainers.image.version": version,
        },
      });
      return { digest, revision };
    };
    await release(FIRST_VERSION);

    const app = accounts.createApp(emu, {
      slug: "ferry",
      name: "Ferry",
      permissions: ferryAppManifest().permissions,
      webhookSecret: WEBHOOK_SECRET,
    });
    accounts.installApp(emu, app.id, OWNER);

    const cluster = await startClusterSimulator({
      // A Pod starts only if its image is really in the embedded registry.
      imageExists: async (image) => imageInRegistry(registry, image),
      rolloutStepMs: 40,
    });
    closers.push(() => cluster.close());
    for (const { namespace } of ENVIRONMENTS)
      cluster.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });

    const logSink = options.log ?? (() => undefined);
    const ferry = await startFerryServer({
      appId: app.id,
      privateKey: app.privateKey,
      webhookSecret: WEBHOOK_SECRET,
      baseUrl: emu.apiUrl,
      webUrl: emu.webUrl,
      Octokit: UnthrottledOctokit,
      scanIntervalMs: options.scanIntervalMs ?? false,
      registrySecrets: { distribution: REGISTRY_NOTIFICATION_SECRET },
      registryCoalesceMs: 20,
      // `/status` on a loopback listener of its own, so the sandbox can show it without a token.
      status: { listen: { host: "127.0.0.1", port: 0 } },
      // The ferry/diff check run on every PR (docs/diff-check.md), as `ferry serve` has it.
      ferry: {
        diffCheck: true,
        ...(options.statusTtlMs !== undefined ? { statusTtlMs: options.statusTtlMs } : {}),
      },
      log: pino({ level: "warn", base: { name: "ferry" } }, { write: (line: string) => logSink(line) }),
    });
    closers.push(() => ferry.close());
    accounts.setWebhook(emu, app.id, `${ferry.url}/api/github/webhooks`, WEBHOOK_SECRET);
    registry.addNotificationEndpoint({
      url: `${ferry.url}/registry/distribution`,
      headers: { Authorization: REGISTRY_NOTIFICATION_SECRET },
    });

    const gitEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: workDir,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_TERMINAL_PROMPT: "0",
    };
    const reconcilers = {} as Record<EnvironmentName, RunningReconciler>;
    for (const { name, namespace } of ENVIRONMENTS) {
      const reconciler = await startReconciler({
        repo: emu.gitUrl(OWNER, CONFIG_REPO),
        ref: "main",
        path: `overlays/${name}`,
        environment: name,
        namespace,
        kubeconfig: cluster.kubeconfig(namespace),
        // hubot stands in for the reconciler's machine account: write access, reads the repo, posts Deployment statuses.
        gitToken: users.hubot.token,
        gitEnv,
        workDir: join(workDir, `reconciler-${name}`),
        prune: { prune: true },
        intervalMs: options.reconcileIntervalMs ?? 600,
        progressingIntervalMs: 100,
        watch: true,
        debounceMs: 100,
        github: { repository: `${OWNER}/${CONFIG_REPO}`, token: users.hubot.token, apiUrl: emu.apiUrl },
      });
      reconcilers[name] = reconciler;
      closers.push(() => reconciler.stop());
    }

    const octokit = (token: string) =>
      new Octokit({
        baseUrl: emu.apiUrl,
        auth: token,
        request: { retries: 0 },
        log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
      });
    return {
      workDir,
      emu,
      registry,
      cluster,
      ferry,
      reconcilers,
      users,
      as: {
        mona: octokit(users.mona.token),
        hubot: octokit(users.hubot.token),
        eve: octokit(users.eve.token),
        octocat: octokit(users.octocat.token),
      },
      botLogin: app.botLogin,
      signal: stopping.signal,
      abort: () => stopping.abort(),
      release: (version) => release(version),
      close: closeAll,
    };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

/** Whether `image` names a tag (or a digest) of the embedded registry; anything else cannot be pulled here. */
function imageInRegistry(registry: EmbeddedRegistry, image: string): boolean {
  let ref;
  try {
    ref = parseImageRef(image);
  } catch {
    return false;
  }
  if (ref.registry !== registry.host) return false;
  if (ref.tag !== undefined) return registry.tags(ref.repository).includes(ref.tag);
  return ref.digest !== undefined && registry.repositories().includes(ref.repository);
}
