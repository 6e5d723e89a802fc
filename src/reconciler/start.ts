/**
 * The reconciler's composition root: turns plain settings (repo, path, kubeconfig, tokens…)
 * into a running reconciler with its adapters, optional status server and GitHub reporter.
 * Used by `ferry reconcile` and by the sandbox, which runs two of them in one process.
 */
import type { PropagationPolicy } from "./sync-options.js";
import { randomBytes } from "node:crypto";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { ConfigRepoFetcher } from "../adapters/git/config-repo-fetcher.js";
import { loadClusterAccess } from "../adapters/kubernetes/cluster-access.js";
import { KubeCluster } from "../adapters/kubernetes/kube-cluster.js";
import { UserError } from "../core/errors.js";
import type { BackoffPolicy } from "./backoff.js";
import type { TokenSource } from "./github-app-tokens.js";
import { DEFAULT_PRUNE_OPTIONS, type PruneOptions } from "./plan.js";
import type { ChartRegistry, ClusterPort, ConfigSource, DeploymentReporter } from "./ports.js";
import type { RenderOptions } from "./render-folder.js";
import { memoryLimitEnforced } from "../adapters/render/render-tools.js";
import type { CycleResult, CycleSettings } from "./reconcile-cycle.js";
import { createReconciler, type Reconciler, type ReconcilerStatus } from "./reconciler.js";
import { accessFor, startStatusServer } from "../adapters/http/reconciler-status-server.js";

/** Label values: at most 63 characters, alphanumerics with `-`, `_` or `.` inside. */
const LABEL_VALUE = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;

export interface ReconcilerSetup {
  /** Config repo: `https://…`, loopback `http://…`, `file://…` or a local path. */
  repo: string;
  ref?: string;
  /** Folder inside the repo to render. */
  path: string;
  /** Names the reconciler's objects and inventory; defaults to `environment`, then `default`. */
  instance?: string;
  /** The Ferry environment (GitHub Deployment environment). */
  environment?: string;
  /** Namespace for namespaced objects without one; defaults to the kubeconfig context's, then `default`. */
  namespace?: string;
  inventoryNamespace?: string;
  createNamespace?: boolean;
  /** Kubeconfig YAML (the simulator's); otherwise `kubeconfigFile`; otherwise in-cluster / default loading. */
  kubeconfig?: string;
  kubeconfigFile?: string;
  /** Where the default kubeconfig is found without either (KUBECONFIG, HOME, a pod's service account): the process's environment in `ferry reconcile`. */
  kubeEnv?: NodeJS.ProcessEnv;
  /** Token for fetching the config repo over HTTP(S), or where it comes from (minted installation tokens). */
  gitToken?: string | TokenSource;
  /** Environment for the git child process (PATH, HOME…). */
  gitEnv?: NodeJS.ProcessEnv;
  workDir?: string;
  dryRun?: boolean;
  /** `--no-self-heal`: report changes made in the cluster as OutOfSync and leave them (default: undo them). */
  selfHeal?: boolean;
  prune?: Partial<PruneOptions>;
  /** `--allow-namespace`: namespaces besides `namespace` objects may be applied in (`*`: any). */
  allowNamespaces?: string[];
  /** `--allow-cluster-kind`: cluster-scoped kinds Ferry may apply (`Kind` or `Kind.group`; `*`: any). */
  allowClusterKinds?: string[];
  /** `--allow-plaintext-secrets`: apply Secrets whose data sits in Git in the clear (refused by default). */
  allowPlaintextSecrets?: boolean;
  /** `--allow-remote-base`: prefixes of kustomize remote resources Ferry may fetch and vendor (remote-bases.ts). */
  allowRemoteBases?: string[];
  /** `--helm-values`: repo-relative values files for a chart folder, in order. */
  helmValues?: string[];
  /** Where charts (`oci://` and Helm HTTP repositories) are downloaded from (the registry client of the CLI). */
  chartRegistry?: ChartRegistry;
  /** `--render-memory-limit`: the renderer's memory (data) limit in bytes. */
  renderMemoryLimitBytes?: number;
  /** The renderer's environment (PATH finds kubectl or kustomize); the process's own when absent. */
  renderEnv?: NodeJS.ProcessEnv;
  /**
   * `--sops-age-key-file`: the age identities SOPS-encrypted files are decrypted with. The
   * reconciler decrypts every SOPS-encrypted file of the checkout before rendering, with or
   * without it (without, sops finds its keys itself or the cycle fails naming the file).
   */
  sopsAgeKeyFile?: string;
  /** `--prune-grace-cycles`: cycles a head without the applied revision applies before it prunes (default 3). */
  pruneGraceCycles?: number;
  /** `--prune-propagation`: the DELETE's propagationPolicy for pruned objects without their own (default Background). */
  prunePropagation?: PropagationPolicy;
  /**
   * How long the path's Lease stays this reconciler's without a renewal (default three intervals,
   * at least a minute); false: no Lease.
   */
  leaseDurationMs?: number | false;
  intervalMs?: number;
  progressingIntervalMs?: number;
  backoff?: BackoffPolicy;
  watch?: boolean;
  debounceMs?: number;
  /** Report Deployment statuses to GitHub. */
  github?: { repository: string; token: string | TokenSource; apiUrl?: string };
  /** Serve `/status`, `/metrics`, `/healthz` here (port 0 picks a free port). */
  listen?: { host: string; port: number };
  /** FERRY_STATUS_TOKEN: the bearer token `/status` and `/metrics` need on a `listen` address off loopback. */
  statusToken?: string;
  /** `--status-listen`: a second listener serving `/status` and `/metrics` without a token (an internal address). */
  statusListen?: { host: string; port: number };
  /** `--request-timeout`: every API request's deadline (default 30 s). */
  requestTimeoutMs?: number;
  /** `--cycle-deadline`: a cycle running longer is reported Unknown/Degraded and fails `/healthz` (default 10 min). */
  cycleDeadlineMs?: number;
  /** While backing off, how often to probe the API server (default 5 s). */
  probeIntervalMs?: number;
  log?: (message: string, fields: Record<string, unknown>) => void;
  now?: () => Date;
  random?: () => number;
  /** Test seams: use these instead of building the real adapters. */
  cluster?: ClusterPort;
  source?: ConfigSource;
  reporter?: DeploymentReporter;
}

export interface RunningReconciler {
  cycle(): Promise<CycleResult>;
  status(): ReconcilerStatus;
  stop(): Promise<void>;
  /** Base URL of the status server, when `listen` was given. */
  statusUrl?: string;
  /** Base URL of the `statusListen` listener. */
  internalStatusUrl?: string;
  readonly reconciler: Reconciler;
}

function gitTokenOf(token: string | TokenSource): string | (() => Promise<string>) {
  return typeof token === "string" ? token : () => token.token();
}

/** Where the config repo comes from: the fetcher of `--repo`/`--ref` into the work dir. */
export function configSourceOf(setup: ReconcilerSetup, instance: string): ConfigSource {
  return new ConfigRepoFetcher({
    repo: setup.repo,
    ...(setup.ref ? { ref: setup.ref } : {}),
    workDir: setup.workDir ?? path.join(tmpdir(), `ferry-reconcile-${instance}`),
    ...(setup.gitToken ? { token: gitTokenOf(setup.gitToken) } : {}),
    ...(setup.gitEnv ? { env: setup.gitEnv } : {}),
  });
}

/** How the path is rendered, the same for a cycle and for `--print-rbac`. */
export function renderOptionsOf(setup: ReconcilerSetup, namespace: string): RenderOptions {
  return {
    allowRemoteBases: setup.allowRemoteBases ?? [],
    helmNamespace: namespace,
    ...(setup.helmValues ? { helmValues: setup.helmValues } : {}),
    ...(setup.chartRegistry ? { chartRegistry: setup.chartRegistry } : {}),
    ...(setup.renderMemoryLimitBytes !== undefined ? { memoryLimitBytes: setup.renderMemoryLimitBytes } : {}),
    ...(setup.renderEnv ? { env: setup.renderEnv } : {}),
    sops: setup.sopsAgeKeyFile !== undefined ? { ageKeyFile: setup.sopsAgeKeyFile } : {},
  };
}

/**
 * The GitHub reporter, whose Octokit is loaded only by a reconciler that reports to GitHub, on its
 * first report: one that does not never pays its memory (docs/capacity.md).
 */
function loadedOnFirstReport(load: () => Promise<DeploymentReporter>): DeploymentReporter {
  let loading: Promise<DeploymentReporter> | undefined;
  return {
    async report(report) {
      loading ??= load();
      loading.catch(() => (loading = undefined));
      return (await loading).report(report);
    },
  };
}

/** Builds the reconciler and its adapters without starting anything. */
export function buildReconciler(setup: ReconcilerSetup): Reconciler {
  const instance = setup.instance ?? setup.environment ?? "default";
  if (!LABEL_VALUE.test(instance)) {
    throw new UserError(
      "invalid-instance",
      `instance name ${JSON.stringify(instance)} must be a valid label value (set --instance)`,
    );
  }
  let cluster = setup.cluster;
  let contextNamespace: string | undefined;
  if (!cluster) {
    let config;
    try {
      config = loadClusterAccess({
        ...(setup.kubeconfig !== undefined ? { kubeconfig: setup.kubeconfig } : {}),
        ...(setup.kubeconfigFile !== undefined ? { kubeconfigFile: setup.kubeconfigFile } : {}),
        ...(setup.kubeEnv !== undefined ? { env: setup.kubeEnv } : {}),
      });
    } catch (error) {
      throw new UserError("invalid-kubeconfig", `cannot load the kubeconfig: ${(error as Error).message}`, {
        cause: error,
      });
    }
    contextNamespace = config.namespace;
    cluster = new KubeCluster(config, undefined, setup.requestTimeoutMs);
  }
  const namespace = setup.namespace ?? contextNamespace ?? "default";
  const source = setup.source ?? configSourceOf(setup, instance);
  const settings: CycleSettings = {
    instance,
    path: setup.path,
    namespace,
    inventoryNamespace: setup.inventoryNamespace ?? namespace,
    createNamespace: setup.createNamespace ?? false,
    dryRun: setup.dryRun ?? false,
    selfHeal: setup.selfHeal ?? true,
    prune: { ...DEFAULT_PRUNE_OPTIONS, ...setup.prune },
    ...(setup.pruneGraceCycles !== undefined ? { pruneGraceCycles: setup.pruneGraceCycles } : {}),
    ...(setup.prunePropagation ? { prunePropagation: setup.prunePropagation } : {}),
    confinement: {
      namespace,
      allowNamespaces: setup.allowNamespaces ?? [],
      allowClusterKinds: setup.allowClusterKinds ?? [],
      allowPlaintextSecrets: setup.allowPlaintextSecrets ?? false,
      createNamespace: setup.createNamespace ?? false,
    },
    render: renderOptionsOf(setup, namespace),
  };
  if (!memoryLimitEnforced())
    setup.log?.("renderer memory limit not enforced on this platform", {
      instance,
      platform: process.platform,
    });
  const github = setup.github;
  const reporter =
    setup.reporter ??
    (github
      ? loadedOnFirstReport(async () => {
          const { GitHubDeploymentReporter } = await import("../adapters/github/deployment-reporter.js");
          return new GitHubDeploymentReporter({
            repository: github.repository,
            environment: setup.environment ?? instance,
            token: github.token,
            instance,
            ...(github.apiUrl ? { baseUrl: github.apiUrl } : {}),
          });
        })
      : undefined);
  const leaseDurationMs = setup.leaseDurationMs ?? Math.max(60_000, 3 * (setup.intervalMs ?? 120_000));
  return createReconciler({
    cluster,
    source,
    settings,
    ...(leaseDurationMs !== false
      ? {
          lease: {
            holder: `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`,
            durationMs: leaseDurationMs,
          },
        }
      : {}),
    ...(setup.intervalMs !== undefined ? { intervalMs: setup.intervalMs } : {}),
    ...(setup.progressingIntervalMs !== undefined
      ? { progressingIntervalMs: setup.progressingIntervalMs }
      : {}),
    ...(setup.backoff ? { backoff: setup.backoff } : {}),
    ...(setup.probeIntervalMs !== undefined ? { probeIntervalMs: setup.probeIntervalMs } : {}),
    ...(setup.cycleDeadlineMs !== undefined ? { cycleDeadlineMs: setup.cycleDeadlineMs } : {}),
    watch: setup.watch ?? false,
    ...(setup.debounceMs !== undefined ? { debounceMs: setup.debounceMs } : {}),
    ...(reporter ? { reporter } : {}),
    ...(setup.log ? { log: setup.log } : {}),
    ...(setup.now ? { now: setup.now } : {}),
    ...(setup.random ? { random: setup.random } : {}),
  });
}

/**
 * Starts a reconciler: its loop (unless `manual`, for callers that drive `cycle()` themselves)
 * and its status server when `listen` is set.
 */
export async function startReconciler(
  setup: ReconcilerSetup & { manual?: boolean },
): Promise<RunningReconciler> {
  const reconciler = buildReconciler(setup);
  const server = setup.listen
    ? await startStatusServer(reconciler, setup.listen, accessFor(setup.listen.host, setup.statusToken))
    : undefined;
  const internal = setup.statusListen
    ? await startStatusServer(reconciler, setup.statusListen, { open: true })
    : undefined;
  if (!setup.manual) reconciler.start();
  return {
    cycle: () => reconciler.cycle(),
    status: () => reconciler.status(),
    async stop() {
      await reconciler.stop();
      await server?.close();
      await internal?.close();
    },
    ...(server ? { statusUrl: server.url } : {}),
    ...(internal ? { internalStatusUrl: internal.url } : {}),
    reconciler,
  };
}

/** One cycle and done: what `ferry reconcile --once` runs. */
export async function reconcileOnce(setup: ReconcilerSetup): Promise<CycleResult> {
  const reconciler = buildReconciler({ ...setup, watch: false });
  try {
    return await reconciler.cycle();
  } finally {
    await reconciler.stop();
  }
}
