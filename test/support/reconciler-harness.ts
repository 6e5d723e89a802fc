/**
 * Shared set-up for the reconciler's integration tests: a real git config repo on disk, the
 * cluster simulator, and a reconciler wired to both with the real adapters.
 */
import { execFileSync } from "node:child_process";
import { decodeInventory, type InventoryRecord } from "../../src/reconciler/inventory-schema.js";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import { ConfigRepoFetcher } from "../../src/adapters/git/config-repo-fetcher.js";
import { KubeCluster } from "../../src/adapters/kubernetes/kube-cluster.js";
import { DEFAULT_PRUNE_OPTIONS, type PruneOptions } from "../../src/reconciler/plan.js";
import type { CycleSettings } from "../../src/reconciler/reconcile-cycle.js";
import { createReconciler, type ReconcilerOptions } from "../../src/reconciler/reconciler.js";
import {
  startClusterSimulator,
  type ClusterSimulatorOptions,
} from "../../packages/sandbox/src/cluster/cluster-simulator.js";
import { captureIo, type CapturedIo } from "./cli-io.js";

export const GIT_ENV = {
  PATH: process.env.PATH,
  HOME: tmpdir(),
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
};

export class TempDirs {
  private readonly dirs: string[] = [];
  make(prefix = "ferry-reconcile-"): string {
    const dir = mkdtempSync(path.join(tmpdir(), prefix));
    this.dirs.push(dir);
    return dir;
  }
  cleanup(): void {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}

/** A config repo whose files tests rewrite commit by commit. */
export class ConfigRepo {
  constructor(readonly dir: string) {
    this.git("init", "-q", "-b", "main");
  }

  git(...args: string[]): string {
    return execFileSync("git", args, { cwd: this.dir, env: GIT_ENV, encoding: "utf8" }).trim();
  }

  /** Writes (string) or deletes (null) files, commits, and returns the commit SHA. */
  commit(files: Record<string, string | null>, message = "update config"): string {
    for (const [file, content] of Object.entries(files)) {
      const full = path.join(this.dir, file);
      if (content === null) rmSync(full, { force: true });
      else {
        mkdirSync(path.dirname(full), { recursive: true });
        writeFileSync(full, content);
      }
    }
    this.git("add", "-A", ".");
    this.git("commit", "-q", "--allow-empty", "-m", message);
    return this.git("rev-parse", "HEAD");
  }
}

export function deploymentYaml(
  name: string,
  options: {
    image?: string;
    replicas?: number;
    namespace?: string;
    annotations?: Record<string, string>;
  } = {},
): string {
  const annotations = options.annotations
    ? `  annotations:\n${Object.entries(options.annotations)
        .map(([key, value]) => `    ${key}: "${value}"`)
        .join("\n")}\n`
    : "";
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
${options.namespace ? `  namespace: ${options.namespace}\n` : ""}${annotations}spec:
  replicas: ${options.replicas ?? 2}
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
        - name: ${name}
          image: ${options.image ?? "ghcr.io/acme/shop:1.8.0"}
`;
}

export function configMapYaml(
  name: string,
  data: Record<string, string> = { key: "value" },
  extraMetadata = "",
): string {
  return `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
${extraMetadata}data:
${Object.entries(data)
  .map(([key, value]) => `  ${key}: "${value}"`)
  .join("\n")}
`;
}

export type SettingsOverrides = Partial<Omit<CycleSettings, "prune">> & { prune?: Partial<PruneOptions> };

export interface Setup {
  sim: Awaited<ReturnType<typeof startClusterSimulator>>;
  repo: ConfigRepo;
  cluster: KubeCluster;
  fetcher: ConfigRepoFetcher;
  settings(overrides?: SettingsOverrides): CycleSettings;
  reconciler(
    overrides?: SettingsOverrides,
    options?: Partial<ReconcilerOptions>,
  ): ReturnType<typeof createReconciler>;
  close(): Promise<void>;
}

export async function setup(
  temp: TempDirs,
  simulatorOptions: ClusterSimulatorOptions = {},
  clusterOptions: { listPageSize?: number } = {},
): Promise<Setup> {
  const sim = await startClusterSimulator(simulatorOptions);
  const repo = new ConfigRepo(temp.make("ferry-config-"));
  const cluster = KubeCluster.fromOptions({ kubeconfig: sim.kubeconfig(), ...clusterOptions });
  const fetcher = new ConfigRepoFetcher({
    repo: repo.dir,
    ref: "main",
    workDir: temp.make("ferry-work-"),
    env: GIT_ENV,
  });
  sim.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
  const settings = (overrides: SettingsOverrides = {}): CycleSettings => ({
    instance: "staging",
    path: "env/staging",
    namespace: "shop",
    inventoryNamespace: "shop",
    createNamespace: false,
    dryRun: false,
    ...overrides,
    prune: { ...DEFAULT_PRUNE_OPTIONS, prune: true, ...overrides.prune },
  });
  const reconcilers: ReturnType<typeof createReconciler>[] = [];
  let closed = false;
  return {
    sim,
    repo,
    cluster,
    fetcher,
    settings,
    reconciler(overrides = {}, options = {}) {
      const reconciler = createReconciler({
        cluster,
        source: fetcher,
        settings: settings(overrides),
        random: () => 0.5,
        ...options,
      });
      reconcilers.push(reconciler);
      return reconciler;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const reconciler of reconcilers) await reconciler.stop();
      await sim.close();
    },
  };
}

/** Requests that change the cluster (dry-runs excluded). */
export function writesOf<T extends { verb: string; dryRun: boolean }>(requests: T[]): T[] {
  return requests.filter(
    (request) =>
      ["create", "update", "patch", "delete", "deletecollection"].includes(request.verb) && !request.dryRun,
  );
}

/**
 * The set-up of a test file whose tests each start their own world: `setup` starts one (as the
 * `setup` above, in `temp`), and after each test every world it started is closed and `temp`'s
 * directories removed.
 */
export function setupPerTest(): {
  temp: TempDirs;
  setup(
    simulatorOptions?: ClusterSimulatorOptions,
    clusterOptions?: { listPageSize?: number },
  ): Promise<Setup>;
} {
  const temp = new TempDirs();
  const started: Setup[] = [];
  afterEach(async () => {
    for (const world of started.splice(0)) await world.close();
    temp.cleanup();
  });
  return {
    temp,
    async setup(simulatorOptions, clusterOptions) {
      const world = await setup(temp, simulatorOptions, clusterOptions);
      started.push(world);
      return world;
    },
  };
}

/** The `CliIo` of `ferry reconcile` in these tests: git's environment and a fixed clock. */
export function reconcileIo(cwd: string): CapturedIo {
  return captureIo(cwd, { env: { ...GIT_ENV }, now: () => new Date("2026-01-01T00:00:00Z") });
}

/** The record in a stored inventory ConfigMap (either format), as the reconciler reads it. */
export function storedInventory(configMap: unknown): InventoryRecord {
  const { data, binaryData } = (configMap ?? {}) as {
    data?: Record<string, unknown>;
    binaryData?: Record<string, unknown>;
  };
  return decodeInventory("test", data, binaryData);
}
