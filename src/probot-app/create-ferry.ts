import type { TrustedRoot } from "@sigstore/protobuf-specs";
/**
 * The Probot app: builds adapters per event, hands ports to the use cases (through the thin
 * handlers), and exposes the periodic scan and registry-hint entry points to the server (`src/server/`).
 * The pieces live beside it: registry readers, installation listing, the `/status` reader and the
 * event registrations. With the server's wiring and `src/cli/serve.ts`, the only place that
 * imports `probot`.
 */
import type { Probot } from "probot";
import { AccessCache } from "../adapters/github/access-cache.js";
import { GitContentCache } from "../adapters/github/git-content-cache.js";
import { snapshotRenderer, type SnapshotRendererOptions } from "../adapters/render/snapshot-renderer.js";
import { RenderCache } from "../app/render-cache.js";
import { createGitHubRepo, type OctokitLike } from "../adapters/github/github-repo.js";
import type { AppDeps, AppLogger } from "../app/app-deps.js";
import { RuleRefusals } from "../app/rule-refusals.js";
import { NotificationOutbox, type NotifyOutcome, type WebhookPoster } from "../app/notify-outbox.js";
import { repositoryNotifier } from "../app/notifications.js";
import { webhookPoster } from "../adapters/notify/webhook-sender.js";
import type { RetrySchedule } from "../core/notify/backoff.js";
import type { NotifyTargets } from "../core/notify/targets.js";
import { KeyedMutex } from "../app/keyed-mutex.js";
import type { RegistryReader } from "../app/ports.js";
import type { ScanRound } from "../app/scan-state.js";
import { type RetryPolicy, WorkQueue } from "../app/work-queue.js";
import { DEFAULT_CONFIG_CONTEXT, type ConfigContext } from "../core/config/config-context.js";
import type { FerryConfig } from "../core/config/schema.js";
import { TransientError } from "../core/errors.js";
import { SecretRedactor } from "../core/redact.js";
import { onRegistryHints, type RegistryHint, type RegistryHintServices } from "../handlers/registry/index.js";
import { CommandFloodGuard } from "../handlers/github/command-flood-guard.js";
import { eachInstallation, installationRepos } from "./installations.js";
import { AppIdentity } from "./app-identity.js";
import { registerEvents } from "./register-events.js";
import { RegistryReaders } from "./registry-readers.js";
import { scanInstallations, type ScanSharding } from "./sharded-scan.js";
import { createStatusReader } from "./status-reader.js";

export interface FerryAppOptions {
  /**
   * The key that seals the plan in each PR body Ferry writes (a secret only Ferry holds, the same
   * on every replica): a body someone else wrote or edited is never believed.
   */
  sealKey: string;
  /** Where registry `passwordEnv`/`tokenEnv` are read. */
  env?: Record<string, string | undefined>;
  /** The non-secret variables naming Ferry's cloud identity in registry errors (AZURE_CLIENT_ID, AZURE_TENANT_ID). */
  identityEnv?: Record<string, string | undefined>;
  /** Refuse registries at private or loopback addresses (production; see the registry client). */
  refusePrivateRegistries?: boolean;
  /** The Docker config.json for `auth: dockerconfig` (FERRY_DOCKER_CONFIG, an operator setting). */
  dockerConfigPath?: string;
  /**
   * The Sigstore trusted root keyless signatures are verified against (FERRY_SIGSTORE_TRUSTED_ROOT);
   * default: the public-good root shipped with @sigstore/tuf. An operator setting.
   */
  sigstoreTrustedRoot?: TrustedRoot;
  /** What configs may ask of this Ferry (which GHCR gets the installation token); default github.com's. */
  configContext?: ConfigContext;
  /** Secrets held from the start (webhook secrets, the private key); `env`'s values are held too. */
  heldSecrets?: (string | undefined)[];
  now?: () => Date;
  /** Web URL for links in PR bodies (`https://github.com`, or the GHE host). */
  webUrl?: string;
  /** Registry readers for a config (tests and the sandbox pass their own); default: the OCI client. */
  registryFor?: (config: FerryConfig, githubToken: () => Promise<string>) => RegistryReader;
  /** Pauses before each retry while GitHub computes a PR's mergeability (default 1, 2, 4, 8 s). */
  mergeabilityRetryDelaysMs?: readonly number[];
  /** Retries of background work that failed for a reason that may pass; default DEFAULT_RETRY. */
  workRetry?: RetryPolicy;
  /** How many replicas share each registry budget (the live scan members); default 1. */
  budgetShare?: () => number;
  /**
   * The `ferry/diff` check run on PRs touching an environment (docs/diff-check.md): on with
   * `true` or the renderer's options (`FERRY_DIFF_CHECK`, on unless `off`, in `ferry serve`).
   */
  diffCheck?: boolean | SnapshotRendererOptions;
  /** Observers (metrics, bench). */
  onPullRequest?: AppDeps["onPullRequest"];
  log?: AppLogger;
  /**
   * Notification targets (FERRY_NOTIFY_*, docs/config.md "Notifications"), and for tests the
   * poster, the retry schedule and the pause between attempts.
   */
  notify?: {
    targets: NotifyTargets;
    poster?: WebhookPoster;
    schedule?: RetrySchedule;
    sleep?: (ms: number) => Promise<void>;
    observe?: (outcome: NotifyOutcome, target: string) => void;
  };
  /** How long a `GET /status` answer is reused (default 10 s): each one walks every installation and repository. */
  statusTtlMs?: number;
  /** How long past the TTL the last `/status` answer is served while a walk refreshes it (default 60 s). */
  statusMaxStaleMs?: number;
  /** At most this many repositories are visited for one `/status` answer (default 200). */
  statusMaxRepositories?: number;
}

const STATUS_TTL_MS = 10_000;
const STATUS_MAX_STALE_MS = 60_000;
const STATUS_MAX_REPOSITORIES = 200;

export type { ScanRound, ScanSharding };

export interface Ferry {
  /** The Probot application function. */
  app: (probot: Probot) => void;
  /**
   * Periodic scan: every repository of every installation, or with `sharding` this replica's
   * rendezvous share of them (webhook work is never sharded).
   */
  scan(probot: Probot, sharding?: ScanSharding): Promise<ScanRound>;
  /** Registry receiver hints → syncs of the config repos that use those repositories (queued: idle() waits for them). */
  hint(probot: Probot, hints: RegistryHint[]): Promise<void>;
  /** Resolves when queued background work is done (tests, shutdown). */
  idle(): Promise<void>;
  readonly queue: WorkQueue;
  /** Trees and blobs by SHA, shared by every repository this process serves (an optimisation only). */
  readonly contentCache: GitContentCache;
  /** Environments × images of every configured repository, for `GET /status`. */
  status(probot: Probot): Promise<Record<string, unknown>>;
  /** The Sigstore trusted root keyless signatures are checked against now. */
  trustedRoot(): TrustedRoot;
  /** A refreshed root (TUF) replaces it for every registry client, from the next check on. */
  setTrustedRoot(root: TrustedRoot): void;
  /** Per registry host: requests in the last minute and this replica's budget, over every owner's client. */
  registryBudgetUse(): Record<string, { used: number; limit: number }>;
}

export function createFerry(options: FerryAppOptions): Ferry {
  if (options.sealKey.length === 0) throw new Error("createFerry: sealKey must not be empty");
  const locks = new KeyedMutex();
  const ruleRefusals = new RuleRefusals();
  // Every secret this process holds, so that no form of one reaches a comment, check or log line.
  const secrets = new SecretRedactor();
  for (const secret of [options.sealKey, ...(options.heldSecrets ?? []), ...Object.values(options.env ?? {})])
    secrets.add(secret);
  // A target's URL is a secret too (Slack's and Teams' carry their key in the path).
  for (const target of options.notify?.targets.values() ?? []) {
    secrets.add(target.url);
    secrets.add(target.secret);
  }
  let log: AppLogger = redactingLogger(
    options.log ?? { info: () => {}, warn: () => {}, error: () => {} },
    secrets,
  );
  const configContext = options.configContext ?? DEFAULT_CONFIG_CONTEXT;
  const clockMs = (): number => (options.now ? options.now().getTime() : Date.now());
  const accessCache = new AccessCache({ now: clockMs });
  const queue = new WorkQueue(
    {
      info: (f, m) => log.info(f, m),
      warn: (f, m) => log.warn(f, m),
      error: (f, m) => log.error(f, m),
    },
    options.workRetry ? { retry: options.workRetry } : {},
  );
  const registries = new RegistryReaders({
    env: options.env ?? {},
    ...(options.identityEnv ? { identityEnv: options.identityEnv } : {}),
    refusePrivateRegistries: options.refusePrivateRegistries ?? false,
    ...(options.dockerConfigPath ? { dockerConfigPath: options.dockerConfigPath } : {}),
    ...(options.sigstoreTrustedRoot ? { trustedRoot: options.sigstoreTrustedRoot } : {}),
    githubTokenHost: configContext.githubContainerRegistry,
    secretBindings: configContext.secretBindings,
    secrets,
    ...(options.registryFor ? { registryFor: options.registryFor } : {}),
    ...(options.budgetShare ? { budgetShare: options.budgetShare } : {}),
  });
  const notifyTargets = options.notify?.targets;
  const outbox =
    notifyTargets && notifyTargets.size > 0
      ? new NotificationOutbox({
          poster:
            options.notify?.poster ??
            webhookPoster({ refusePrivate: options.refusePrivateRegistries ?? false }),
          log: () => log,
          now: clockMs,
          sleep: options.notify?.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
          ...(options.notify?.schedule ? { schedule: options.notify.schedule } : {}),
          ...(options.notify?.observe ? { observe: options.notify.observe } : {}),
        })
      : undefined;
  const contentCache = new GitContentCache();
  const identity = new AppIdentity(() => log);
  const diff = options.diffCheck
    ? {
        renderer: snapshotRenderer(options.diffCheck === true ? {} : options.diffCheck),
        cache: new RenderCache(),
      }
    : undefined;

  const depsFor = (octokit: OctokitLike, owner: string, repo: string): AppDeps => {
    // Without its own login Ferry cannot tell its PRs from anyone's: no work starts
    // (docs/reliability.md row 81).
    const appLogin = identity.login;
    if (appLogin === undefined) {
      void identity.known();
      throw new TransientError("app-login-unknown", "Ferry's own GitHub login is not known yet (GET /app)");
    }
    const github = createGitHubRepo(octokit, owner, repo, contentCache, accessCache);
    return {
      github,
      registryFor: (config) => registries.for(config, octokit, owner),
      now: options.now ?? (() => new Date()),
      log,
      webUrl: options.webUrl ?? "https://github.com",
      locks,
      ruleRefusals,
      sealKey: options.sealKey,
      // The rules of this installation: secrets bound to other installations are refused.
      configContext: {
        ...configContext,
        installationOwner: owner,
        ...(notifyTargets ? { notifyTargets } : {}),
      },
      secrets,
      appLogin,
      ...(options.onPullRequest ? { onPullRequest: options.onPullRequest } : {}),
      ...(diff ? { diff } : {}),
      ...(options.mergeabilityRetryDelaysMs
        ? { mergeabilityRetryDelaysMs: options.mergeabilityRetryDelaysMs }
        : {}),
      ...(outbox && notifyTargets
        ? {
            notify: repositoryNotifier({
              outbox,
              targets: notifyTargets,
              ledger: github,
              owner,
              log: () => log,
            }),
          }
        : {}),
    };
  };

  const services: RegistryHintServices = {
    depsFor,
    installationRepos,
    queue,
    commandGuard: new CommandFloodGuard({ now: clockMs }),
    forgetTags: (repository) => registries.invalidate(repository),
  };
  const status = createStatusReader({
    depsFor,
    ready: () => identity.known(),
    log: () => log,
    clock: clockMs,
    secrets,
    ttlMs: options.statusTtlMs ?? STATUS_TTL_MS,
    maxStaleMs: options.statusMaxStaleMs ?? STATUS_MAX_STALE_MS,
    maxRepositories: options.statusMaxRepositories ?? STATUS_MAX_REPOSITORIES,
  });

  // A scan or a hint lists the installations (GitHub calls) before it queues any work, so idle()
  // waits for those walks as well as for the queue: "idle" means no GitHub call is still coming.
  const walks = new Set<Promise<unknown>>();
  const walk = <T>(work: Promise<T>): Promise<T> => {
    walks.add(work);
    const done = () => void walks.delete(work);
    work.then(done, done);
    return work;
  };

  return {
    app(probot) {
      log = redactingLogger(childLogger(probot), secrets);
      registerEvents(probot, services, identity);
    },
    queue,
    contentCache,
    async idle() {
      while (walks.size > 0) await Promise.allSettled([...walks]);
      await queue.idle();
      await outbox?.idle();
    },
    scan(probot, sharding) {
      return walk(identity.known().then(() => scanInstallations(probot, services, sharding)));
    },
    async hint(probot, hints) {
      await identity.known();
      return onRegistryHints(
        { hints, eachInstallation: (visit) => eachInstallation(probot, visit) },
        services,
      );
    },
    status,
    trustedRoot: () => registries.trustedRoot(),
    setTrustedRoot: (root) => registries.setTrustedRoot(root),
    registryBudgetUse: () => registries.budgetUse(),
  };
}

/** The Probot application function alone (for `probot run` and tests that load it into a Probot). */
export function createFerryApp(options: FerryAppOptions): (probot: Probot) => void {
  return createFerry(options).app;
}

/** Log lines and their fields with every held secret redacted (the logs are a text like any other). */
function redactingLogger(base: AppLogger, secrets: SecretRedactor): AppLogger {
  return {
    info: (fields, message) => base.info(secrets.redactDeep(fields), secrets.redact(message)),
    warn: (fields, message) => base.warn(secrets.redactDeep(fields), secrets.redact(message)),
    error: (fields, message) => base.error(secrets.redactDeep(fields), secrets.redact(message)),
  };
}

function childLogger(probot: Probot): AppLogger {
  const base = probot.log.child({ name: "ferry" });
  return {
    info: (fields, message) => base.info(fields, message),
    warn: (fields, message) => base.warn(fields, message),
    error: (fields, message) => base.error(fields, message),
  };
}
