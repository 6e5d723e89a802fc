/**
 * Reconciler figures: time and API requests to converge 1,000 objects from nothing, the same for
 * a no-op cycle (which must write nothing) and for a no-op cycle of a restarted process (its Lease
 * is its only write: the bench counts it), and the peak RSS sampled while doing it. Measured
 * against the cluster simulator here and against kube-apiserver + etcd in `reconcile-real.ts`.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { ConfigRepoFetcher } from "../../src/adapters/git/config-repo-fetcher.js";
import { KubeCluster } from "../../src/adapters/kubernetes/kube-cluster.js";
import { DEFAULT_PRUNE_OPTIONS } from "../../src/reconciler/plan.js";
import { createReconciler } from "../../src/reconciler/reconciler.js";
import { startClusterSimulator } from "../../packages/sandbox/src/cluster/cluster-simulator.js";
import { sized } from "./size.js";

export const OBJECTS = sized(1000, 100);
const DEPLOYMENTS = sized(50, 5);

/**
 * The objects every reconcile figure converges, as one multi-document YAML without namespaces:
 * `objects` in all (1,000 by default), 1 in 20 of them Deployments, the rest ConfigMaps.
 */
export function manifests(objects = OBJECTS): string {
  const deployments = Math.round((objects * DEPLOYMENTS) / OBJECTS);
  const documents: string[] = [];
  for (let index = 0; index < objects - deployments; index++) {
    documents.push(
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-${index}\ndata:\n  index: "${index}"\n  greeting: hello\n`,
    );
  }
  for (let index = 0; index < deployments; index++) {
    documents.push(
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-${index}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web-${index}}\n` +
        `  template:\n    metadata:\n      labels: {app: web-${index}}\n    spec:\n      containers:\n        - name: web\n          image: ghcr.io/acme/shop:1.8.0\n`,
    );
  }
  return documents.join("---\n");
}

/** A git config repo in a fresh temporary `root` holding `manifests(objects)` under env/, and its fetcher per holder. */
export function benchConfigRepo(objects = OBJECTS): {
  root: string;
  repo: string;
  env: NodeJS.ProcessEnv;
  source: (holder: string) => ConfigRepoFetcher;
} {
  const root = mkdtempSync(path.join(tmpdir(), "ferry-bench-reconcile-"));
  const env = {
    PATH: process.env.PATH,
    HOME: root,
    GIT_AUTHOR_NAME: "bench",
    GIT_AUTHOR_EMAIL: "bench@example.com",
    GIT_COMMITTER_NAME: "bench",
    GIT_COMMITTER_EMAIL: "bench@example.com",
  };
  const repo = path.join(root, "config");
  mkdirSync(path.join(repo, "env"), { recursive: true });
  writeFileSync(path.join(repo, "env", "all.yaml"), manifests(objects));
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, env, stdio: "ignore" });
  git("init", "-q", "-b", "main");
  git("add", "env");
  git("commit", "-q", "-m", "bench");
  return {
    root,
    repo,
    env,
    source: (holder) => new ConfigRepoFetcher({ repo, workDir: path.join(root, `work-${holder}`), env }),
  };
}

/** The reconciler every reconcile figure runs: env/ of the bench repo into a namespace (`bench` unless given), pruning. */
export function startBenchReconciler(
  kubeconfig: string,
  source: ConfigRepoFetcher,
  holder: string,
  /** The namespace it applies into and keeps its inventory in, and its instance name. */
  namespace = "bench",
) {
  return createReconciler({
    cluster: KubeCluster.fromOptions({ kubeconfig }),
    source,
    settings: {
      instance: namespace,
      path: "env",
      namespace,
      inventoryNamespace: namespace,
      createNamespace: false,
      dryRun: false,
      prune: { ...DEFAULT_PRUNE_OPTIONS, prune: true },
    },
    lease: { holder, durationMs: 600_000 },
  });
}

/** Counts API requests where the backend can: the simulator's request log, kube-apiserver's /metrics. */
export interface RequestCounter {
  reset(): Promise<void>;
  /** Requests and writes (dry-runs excluded) since the last reset. */
  count(): Promise<{ requests: number; writes: number }>;
}

/**
 * Converges 1,000 objects from nothing, then runs a no-op cycle, as the reconciler in this process
 * against `kubeconfig`; `prefix` names the figures. Namespace `bench` must exist.
 */
export async function measureReconcile(
  kubeconfig: string,
  counter: RequestCounter,
  prefix: string,
): Promise<Record<string, number>> {
  const { root, source } = benchConfigRepo();

  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 20);
  try {
    const start = (holder: string) => startBenchReconciler(kubeconfig, source(holder), holder);
    const reconciler = start("first");
    await counter.reset();
    let started = performance.now();
    const first = await reconciler.cycle();
    const convergeMs = performance.now() - started;
    if (first.errors.length > 0 || first.applied.length !== OBJECTS)
      throw new Error(`converge failed: ${first.errors[0] ?? `${first.applied.length} applied`}`);
    const converge = await counter.count();

    await counter.reset();
    started = performance.now();
    const noop = await reconciler.cycle();
    const noopMs = performance.now() - started;
    const noopCount = await counter.count();
    if (noop.errors.length > 0) throw new Error(`no-op cycle failed: ${noop.errors[0]}`);
    await reconciler.stop();

    // A restarted process (or the next `--once` run): a new cluster client, no memory of its own.
    const restarted = start("restarted");
    await counter.reset();
    started = performance.now();
    const afterRestart = await restarted.cycle();
    await restarted.stop();
    const restartMs = performance.now() - started;
    const restartCount = await counter.count();
    if (afterRestart.errors.length > 0) throw new Error(`restarted cycle failed: ${afterRestart.errors[0]}`);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    return {
      [`${prefix}.converge_${OBJECTS}_objects_ms`]: convergeMs,
      [`${prefix}.converge_${OBJECTS}_objects_api_requests`]: converge.requests,
      [`${prefix}.noop_cycle_${OBJECTS}_objects_ms`]: noopMs,
      [`${prefix}.noop_cycle_api_requests`]: noopCount.requests,
      [`${prefix}.noop_cycle_writes`]: noopCount.writes,
      [`${prefix}.noop_after_restart_ms`]: restartMs,
      [`${prefix}.noop_after_restart_api_requests`]: restartCount.requests,
      [`${prefix}.noop_after_restart_writes`]: restartCount.writes,
      [`${prefix}.peak_rss_mb`]: peakRss / (1024 * 1024),
    };
  } finally {
    clearInterval(sampler);
    rmSync(root, { recursive: true, force: true });
  }
}

/** Against the cluster simulator (in this process, so the RSS includes the simulator's objects). */
export async function bench(): Promise<Record<string, number>> {
  const sim = await startClusterSimulator({ rolloutStepMs: 1000 });
  try {
    sim.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "bench" } });
    const counter: RequestCounter = {
      reset: async () => sim.resetRequests(),
      count: async () => {
        const requests = sim.requests();
        return {
          requests: requests.length,
          writes: requests.filter(
            (request) => ["create", "update", "patch", "delete"].includes(request.verb) && !request.dryRun,
          ).length,
        };
      },
    };
    return await measureReconcile(sim.kubeconfig(), counter, "reconcile");
  } finally {
    await sim.close();
  }
}
