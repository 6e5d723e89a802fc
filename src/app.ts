/**
 * The Probot app: builds adapters per event, hands ports to the use cases (through the thin
 * handlers), and exposes the periodic scan and registry-hint entry points to `src/main.ts`.
 * With `src/main.ts` and `src/cli/serve.ts`, the only module that imports `probot`.
 */
import type { Probot } from "probot";
import { createRegistryClient, type RegistryClient } from "./adapters/registry/index.js";
import { GitContentCache } from "./adapters/github/git-content-cache.js";
import { GitHubRepoAdapter, type OctokitLike } from "./adapters/github/github-repo.js";
import type { AppDeps, AppLogger } from "./app/app-deps.js";
import { KeyedMutex } from "./app/keyed-mutex.js";
import type { ScanRound } from "./app/scan-state.js";
import { currentImages, planEnvironment } from "./app/plan-environment.js";
import type { RegistryReader } from "./app/ports.js";
import { WorkQueue } from "./app/work-queue.js";
import type { FerryConfig } from "./core/config/schema.js";
import {
  installationKey,
  isLargeInstallation,
  ownerOf,
  shareOf,
  type ScanShareOptions,
} from "./core/shard/rendezvous.js";
import { hintsFromGitHubPackageEvent, type RegistryHint } from "./handlers/registry/index.js";
import {
  onChecksCompleted,
  onInstallation,
  onIssueComment,
  onPackage,
  onPullRequest,
  onPush,
  syncInstallation,
} from "./handlers/github/handlers.js";
import type { HandlerEvent, HandlerServices } from "./handlers/github/services.js";

export interface FerryAppOptions {
  /** Where registry `passwordEnv`/`tokenEnv` are read. */
  env?: Record<string, string | undefined>;
  /** Refuse registries at private or loopback addresses (production; see the registry client). */
  refusePrivateRegistries?: boolean;
  now?: () => Date;
  /** Web URL for links in PR bodies (`https://github.com`, or the GHE host). */
  webUrl?: string;
  /** Registry readers for a config (tests and the sandbox pass their own); default: the OCI client. */
  registryFor?: (config: FerryConfig, githubToken: () => Promise<string>) => RegistryReader;
  /** How many replicas share each registry budget (the live scan members); default 1. */
  budgetShare?: () => number;
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

/** The periodic scan's view of the fleet (see src/adapters/kubernetes/lease-membership.ts). */
export interface ScanSharding extends ScanShareOptions {
  readonly self: string;
  /** Live members now; empty when this replica cannot prove it is one (it then scans nothing). */
  members(): string[];
  largeInstallations(): Set<number>;
  announceLarge(ids: Iterable<number>): void;
}

export type { ScanRound };

export interface Ferry {
  /** The Probot application function. */
  app: (probot: Probot) => void;
  /**
   * Periodic scan: every repository of every installation, or with `sharding` this replica's
   * rendezvous share of them (webhook work is never sharded).
   */
  scan(probot: Probot, sharding?: ScanSharding): Promise<ScanRound>;
  /** Registry receiver hints → syncs of the config repos that use those repositories. */
  hint(probot: Probot, hints: RegistryHint[]): Promise<void>;
  /** Resolves when queued background work is done (tests, shutdown). */
  idle(): Promise<void>;
  readonly queue: WorkQueue;
  /** Trees and blobs by SHA, shared by every repository this process serves (an optimisation only). */
  readonly contentCache: GitContentCache;
  /** Environments × images of every configured repository, for `GET /status`. */
  status(probot: Probot): Promise<Record<string, unknown>>;
  /** Per registry host: requests in the last minute and this replica's budget, over every owner's client. */
  registryBudgetUse(): Record<string, { used: number; limit: number }>;
}

export function createFerry(options: FerryAppOptions = {}): Ferry {
  const locks = new KeyedMutex();
  let log: AppLogger = options.log ?? { info: () => {}, warn: () => {}, error: () => {} };
  const queue = new WorkQueue({
    info: (f, m) => log.info(f, m),
    warn: (f, m) => log.warn(f, m),
    error: (f, m) => log.error(f, m),
  });
  const registries = new Map<string, RegistryReader>();
  const contentCache = new GitContentCache();
  let appLogin: string | undefined;

  const registryFor = (config: FerryConfig, octokit: OctokitLike, owner: string): RegistryReader => {
    const token = async (): Promise<string> => {
      const auth =
        (await (octokit as unknown as { auth: (o: { type: string }) => Promise<{ token: string }> }).auth({
          type: "installation",
        })) ?? {};
      return auth.token;
    };
    if (options.registryFor) return options.registryFor(config, token);
    // One client per owner and registries block keeps the tag cache and per-registry budgets.
    const key = `${owner}:${JSON.stringify(config.registries ?? {})}`;
    let client = registries.get(key);
    if (!client) {
      client = createRegistryClient({
        registries: config.registries ?? {},
        env: options.env ?? {},
        githubToken: token,
        refusePrivateRegistries: options.refusePrivateRegistries ?? false,
        ...(options.budgetShare ? { budgetShare: options.budgetShare } : {}),
      });
      registries.set(key, client);
    }
    return client;
  };

  const depsFor = (octokit: OctokitLike, owner: string, repo: string): AppDeps => ({
    github: new GitHubRepoAdapter(octokit, owner, repo, contentCache),
    registry: unconfiguredRegistry,
    registryFor: (config) => registryFor(config, octokit, owner),
    planEnvironment,
    currentImages,
    now: options.now ?? (() => new Date()),
    log,
    webUrl: options.webUrl ?? "https://github.com",
    locks,
    ...(appLogin ? { appLogin } : {}),
    ...(options.onPullRequest ? { onPullRequest: options.onPullRequest } : {}),
  });

  const installationRepos = async (
    octokit: OctokitLike,
  ): Promise<{ owner: string; repo: string; defaultBranch?: string }[]> => {
    const repos: { owner: string; repo: string; defaultBranch?: string }[] = [];
    for (let page = 1; page <= 10; page++) {
      const { data } = await octokit.rest.apps.listReposAccessibleToInstallation({ per_page: 100, page });
      for (const repository of data.repositories) {
        // The listing names each default branch: one request less per repository and scan.
        if (!repository.archived)
          repos.push({
            owner: repository.owner.login,
            repo: repository.name,
            ...(repository.default_branch ? { defaultBranch: repository.default_branch } : {}),
          });
      }
      if (data.repositories.length < 100) break;
    }
    return repos;
  };

  const services: HandlerServices = { depsFor, installationRepos, queue };
  const clock = (): number => (options.now ? options.now().getTime() : Date.now());
  let statusAnswer: { at: number; value: Promise<Record<string, unknown>> } | undefined;

  const eachInstallation = async (
    probot: Probot,
    visit: (octokit: OctokitLike, installationId: number) => Promise<void>,
  ): Promise<void> => {
    const appOctokit = await probot.auth();
    const installations = await appOctokit.paginate(appOctokit.rest.apps.listInstallations, {
      per_page: 100,
    });
    for (const installation of installations) {
      const octokit = (await probot.auth(installation.id)) as unknown as OctokitLike;
      await visit(octokit, installation.id);
    }
  };

  /** Environments × images of every configured repository, visiting at most `statusMaxRepositories`. */
  const collectAllStatus = async (probot: Probot): Promise<Record<string, unknown>> => {
    const { loadRepoConfig } = await import("./app/load-repo-config.js");
    const { collectStatus, loadState } = await import("./app/state.js");
    const result: Record<string, unknown> = {};
    let budget = options.statusMaxRepositories ?? STATUS_MAX_REPOSITORIES;
    await eachInstallation(probot, async (octokit) => {
      if (budget <= 0) return;
      for (const { owner, repo, defaultBranch } of await installationRepos(octokit)) {
        if (budget-- <= 0) {
          log.warn(
            { limit: options.statusMaxRepositories ?? STATUS_MAX_REPOSITORIES },
            "status: repository limit reached; the rest is left out",
          );
          return;
        }
        const deps = depsFor(octokit, owner, repo);
        // A GET never writes: a broken config is reported by the sync, not by a status read.
        const loaded = await loadRepoConfig(deps, defaultBranch, { readOnly: true });
        if (!loaded.ok) continue;
        const { state } = await loadState(deps);
        result[`${owner}/${repo}`] = await collectStatus(deps, loaded, state);
      }
    });
    return result;
  };

  const app = (probot: Probot): void => {
    log = childLogger(probot);
    const event = <P>(context: {
      id: string;
      name: string;
      payload: unknown;
      octokit: unknown;
    }): HandlerEvent<P> => ({
      id: context.id,
      name: context.name,
      payload: context.payload as P,
      octokit: context.octokit as OctokitLike,
    });
    void probot
      .auth()
      .then((octokit) => octokit.rest.apps.getAuthenticated())
      .then(({ data }) => {
        if (data?.slug) appLogin = `${data.slug}[bot]`;
      })
      .catch(() => undefined);
    probot.on("issue_comment.created", (context) => onIssueComment(event(context), services));
    probot.on(
      ["pull_request.opened", "pull_request.synchronize", "pull_request.reopened", "pull_request.closed"],
      (context) => onPullRequest(event(context), services),
    );
    probot.on("push", (context) => onPush(event(context), services));
    probot.on(
      ["check_suite.completed", "check_run.completed", "status", "workflow_run.completed"],
      (context) => onChecksCompleted(event(context), services),
    );
    probot.on(["registry_package.published", "package.published"], (context) =>
      onPackage(
        event(context),
        services,
        hintsFromGitHubPackageEvent(context.name as "registry_package" | "package", context.payload).map(
          hintRepository,
        ),
      ),
    );
    probot.on(["installation.created", "installation_repositories.added"], (context) =>
      onInstallation(event(context), services),
    );
  };

  return {
    app,
    queue,
    contentCache,
    registryBudgetUse() {
      const total: Record<string, { used: number; limit: number }> = {};
      for (const client of registries.values()) {
        const use = (client as Partial<RegistryClient>).budgetUse?.() ?? {};
        for (const [registry, { used, limit }] of Object.entries(use)) {
          const entry = (total[registry] ??= { used: 0, limit: 0 });
          entry.used += used;
          entry.limit += limit;
        }
      }
      return total;
    },
    idle: () => queue.idle(),
    async scan(probot, sharding) {
      // Not a live member (its own Lease lapsed): no share, and not even the installation list.
      if (sharding && !sharding.members().includes(sharding.self))
        return { installations: 0, scanned: [], members: [], cutOff: true };
      const appOctokit = await probot.auth();
      const installations = await appOctokit.paginate(appOctokit.rest.apps.listInstallations, {
        per_page: 100,
      });
      const members = sharding ? sharding.members() : [];
      const round: ScanRound = { installations: installations.length, scanned: [], members, cutOff: false };
      const large = sharding?.largeInstallations() ?? new Set<number>();
      for (const installation of installations) {
        const id = installation.id;
        if (sharding) {
          // A replica that lost its Lease mid-round stops here: the others are taking its share.
          if (!sharding.members().includes(sharding.self)) {
            round.cutOff = true;
            break;
          }
          const owner = ownerOf(installationKey(id), members);
          if (!large.has(id) && owner !== sharding.self) continue;
        }
        const octokit = (await probot.auth(id)) as unknown as OctokitLike;
        round.scanned.push(id);
        const select = sharding
          ? <R extends { owner: string; repo: string }>(repositories: R[]): R[] => {
              const names = repositories.map((r) => `${r.owner}/${r.repo}`);
              if (!isLargeInstallation({ id, repositories: names }, sharding)) return repositories;
              // The owner that finds it large scans it whole this round and tells the others, who
              // split it by repository from their next round on.
              if (!large.has(id)) {
                sharding.announceLarge([id]);
                return repositories;
              }
              const share = shareOf({ id, repositories: names }, members, sharding.self, sharding);
              const mine = new Set(share.scope === "repositories" ? share.repositories : []);
              return repositories.filter((r) => mine.has(`${r.owner}/${r.repo}`));
            }
          : undefined;
        // A replica that lost its Lease, or this installation, by the time the queued work runs
        // leaves it to the member that holds it now.
        const stillOurs = sharding
          ? (): boolean => {
              const current = sharding.members();
              if (!current.includes(sharding.self)) return false;
              return large.has(id) || ownerOf(installationKey(id), current) === sharding.self;
            }
          : undefined;
        syncInstallation(
          { octokit, installationId: id },
          services,
          { reason: "scan" },
          {
            ...(select ? { selectRepositories: select } : {}),
            ...(stillOurs ? { stillOurs } : {}),
          },
        );
      }
      return round;
    },
    async hint(probot, hints) {
      if (hints.length === 0) return;
      for (const hint of hints)
        for (const client of registries.values())
          (client as { invalidate?: (r: string) => void }).invalidate?.(hintRepository(hint));
      const repositories = [...new Set(hints.map(hintRepository))];
      await eachInstallation(probot, async (octokit, installationId) => {
        syncInstallation({ octokit, installationId }, services, { reason: "registry", repositories });
      });
    },
    status(probot) {
      // A monitoring scrape or a dashboard refresh must not turn into one GitHub walk per request:
      // concurrent and repeated requests within the TTL share one answer (a failure is not kept).
      const at = clock();
      if (statusAnswer && at - statusAnswer.at < (options.statusTtlMs ?? STATUS_TTL_MS))
        return statusAnswer.value;
      const value = collectAllStatus(probot);
      statusAnswer = { at, value };
      value.catch(() => {
        if (statusAnswer?.value === value) statusAnswer = undefined;
      });
      return value;
    },
  };
}

/** The Probot application function alone (for `probot run` and tests that load it into a Probot). */
export function createFerryApp(options: FerryAppOptions = {}): (probot: Probot) => void {
  return createFerry(options).app;
}

function hintRepository(hint: RegistryHint): string {
  return `${hint.registry}/${hint.repository}`;
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
