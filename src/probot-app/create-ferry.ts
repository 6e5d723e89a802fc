/**
 * The Probot app: builds adapters per event, hands ports to the use cases (through the thin
 * handlers), and exposes the periodic scan and registry-hint entry points to `src/main.ts`. The
 * pieces live beside it: registry readers, installation listing, the `/status` reader and the
 * event registrations. With `src/main.ts` and `src/cli/serve.ts`, the only place that imports
 * `probot`.
 */
import type { Probot } from "probot";
import { GitContentCache } from "../adapters/github/git-content-cache.js";
import { GitHubRepoAdapter, type OctokitLike } from "../adapters/github/github-repo.js";
import type { AppDeps, AppLogger } from "../app/app-deps.js";
import { KeyedMutex } from "../app/keyed-mutex.js";
import type { RegistryReader } from "../app/ports.js";
import { WorkQueue } from "../app/work-queue.js";
import type { FerryConfig } from "../core/config/schema.js";
import type { RegistryHint } from "../handlers/registry/index.js";
import { syncInstallation } from "../handlers/github/handlers.js";
import type { HandlerServices } from "../handlers/github/services.js";
import { eachInstallation, installationRepos } from "./installations.js";
import { hintRepository, registerEvents, type AppIdentity } from "./register-events.js";
import { RegistryReaders } from "./registry-readers.js";
import { createStatusReader } from "./status-reader.js";

export interface FerryAppOptions {
  /**
   * The key that seals the plan in each PR body Ferry writes (a secret only Ferry holds, the same
   * on every replica): a body someone else wrote or edited is never believed.
   */
  sealKey: string;
  /** Where registry `passwordEnv`/`tokenEnv` are read. */
  env?: Record<string, string | undefined>;
  /** Refuse registries at private or loopback addresses (production; see the registry client). */
  refusePrivateRegistries?: boolean;
  now?: () => Date;
  /** Web URL for links in PR bodies (`https://github.com`, or the GHE host). */
  webUrl?: string;
  /** Registry readers for a config (tests and the sandbox pass their own); default: the OCI client. */
  registryFor?: (config: FerryConfig, githubToken: () => Promise<string>) => RegistryReader;
  /** Observers (metrics, bench). */
  onPullRequest?: AppDeps["onPullRequest"];
  log?: AppLogger;
  /** How long a `GET /status` answer is reused (default 10 s): each one walks every installation and repository. */
  statusTtlMs?: number;
  /** At most this many repositories are visited for one `/status` answer (default 200). */
  statusMaxRepositories?: number;
}

const STATUS_TTL_MS = 10_000;
const STATUS_MAX_REPOSITORIES = 200;

export interface Ferry {
  /** The Probot application function. */
  app: (probot: Probot) => void;
  /** Periodic scan: every repository of every installation. */
  scan(probot: Probot): Promise<void>;
  /** Registry receiver hints → syncs of the config repos that use those repositories. */
  hint(probot: Probot, hints: RegistryHint[]): Promise<void>;
  /** Resolves when queued background work is done (tests, shutdown). */
  idle(): Promise<void>;
  readonly queue: WorkQueue;
  /** Trees and blobs by SHA, shared by every repository this process serves (an optimisation only). */
  readonly contentCache: GitContentCache;
  /** Environments × images of every configured repository, for `GET /status`. */
  status(probot: Probot): Promise<Record<string, unknown>>;
}

export function createFerry(options: FerryAppOptions): Ferry {
  if (options.sealKey.length === 0) throw new Error("createFerry: sealKey must not be empty");
  const locks = new KeyedMutex();
  let log: AppLogger = options.log ?? { info: () => {}, warn: () => {}, error: () => {} };
  const queue = new WorkQueue({
    info: (f, m) => log.info(f, m),
    warn: (f, m) => log.warn(f, m),
    error: (f, m) => log.error(f, m),
  });
  const registries = new RegistryReaders({
    env: options.env ?? {},
    refusePrivateRegistries: options.refusePrivateRegistries ?? false,
    ...(options.registryFor ? { registryFor: options.registryFor } : {}),
  });
  const contentCache = new GitContentCache();
  const identity: AppIdentity = {};

  const depsFor = (octokit: OctokitLike, owner: string, repo: string): AppDeps => ({
    github: new GitHubRepoAdapter(octokit, owner, repo, contentCache),
    registry: unconfiguredRegistry,
    registryFor: (config) => registries.for(config, octokit, owner),
    now: options.now ?? (() => new Date()),
    log,
    webUrl: options.webUrl ?? "https://github.com",
    locks,
    sealKey: options.sealKey,
    ...(identity.login ? { appLogin: identity.login } : {}),
    ...(options.onPullRequest ? { onPullRequest: options.onPullRequest } : {}),
  });

  const services: HandlerServices = { depsFor, installationRepos, queue };
  const status = createStatusReader({
    depsFor,
    log: () => log,
    clock: () => (options.now ? options.now().getTime() : Date.now()),
    ttlMs: options.statusTtlMs ?? STATUS_TTL_MS,
    maxRepositories: options.statusMaxRepositories ?? STATUS_MAX_REPOSITORIES,
  });

  return {
    app(probot) {
      log = childLogger(probot);
      registerEvents(probot, services, identity);
    },
    queue,
    contentCache,
    idle: () => queue.idle(),
    async scan(probot) {
      await eachInstallation(probot, async (octokit, installationId) => {
        syncInstallation({ octokit, installationId }, services, { reason: "scan" });
      });
    },
    async hint(probot, hints) {
      if (hints.length === 0) return;
      for (const hint of hints) registries.invalidate(hintRepository(hint));
      const repositories = [...new Set(hints.map(hintRepository))];
      await eachInstallation(probot, async (octokit, installationId) => {
        syncInstallation({ octokit, installationId }, services, { reason: "registry", repositories });
      });
    },
    status,
  };
}

/** The Probot application function alone (for `probot run` and tests that load it into a Probot). */
export function createFerryApp(options: FerryAppOptions): (probot: Probot) => void {
  return createFerry(options).app;
}

const unconfiguredRegistry: RegistryReader = {
  listTags: () => Promise.reject(new Error("registry used before the config was loaded")),
  resolveDigest: () => Promise.reject(new Error("registry used before the config was loaded")),
  describe: () => Promise.reject(new Error("registry used before the config was loaded")),
};

function childLogger(probot: Probot): AppLogger {
  const base = probot.log.child({ name: "ferry" });
  return {
    info: (fields, message) => base.info(fields, message),
    warn: (fields, message) => base.warn(fields, message),
    error: (fields, message) => base.error(fields, message),
  };
}
