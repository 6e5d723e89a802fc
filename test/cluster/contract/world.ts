/**
 * One contract test's world on a backend: a fresh namespace and Ferry instance (so tests sharing
 * one API server never see each other's objects), a real git config repo, the admin's cluster
 * port and kubectl, and reconcilers wired to the real adapters.
 */
import { randomBytes } from "node:crypto";
import { ConfigRepoFetcher } from "../../../src/adapters/git/config-repo-fetcher.js";
import { KubeCluster } from "../../../src/adapters/kubernetes/kube-cluster.js";
import { DEFAULT_PRUNE_OPTIONS } from "../../../src/reconciler/plan.js";
import type { ClusterPort, LeaseRecord } from "../../../src/reconciler/ports.js";
import type { CycleSettings } from "../../../src/reconciler/reconcile-cycle.js";
import {
  createReconciler,
  type Reconciler,
  type ReconcilerOptions,
} from "../../../src/reconciler/reconciler.js";
import type { KubeObject, ObjectRef } from "../../../src/reconciler/types.js";
import { ConfigRepo, GIT_ENV, TempDirs, type SettingsOverrides } from "../../support/reconciler-harness.js";
import { Kubectl, type ClusterBackend } from "./backend.js";

/** Counts the calls a reconciler makes through its cluster port, writes apart. */
export class CountingCluster implements ClusterPort {
  writes: string[] = [];
  deletes: ObjectRef[] = [];
  dryRuns = 0;
  /** Probes answered, and failed, since construction. */
  probes = { ok: 0, failed: 0 };

  constructor(private readonly inner: ClusterPort) {}

  reset(): void {
    this.writes = [];
    this.deletes = [];
    this.dryRuns = 0;
  }

  isNamespaced(apiVersion: string, kind: string) {
    return this.inner.isNamespaced(apiVersion, kind);
  }
  list(apiVersion: string, kind: string, namespace: string | undefined, labelSelector: string) {
    return this.inner.list(apiVersion, kind, namespace, labelSelector);
  }
  get(ref: ObjectRef) {
    return this.inner.get(ref);
  }
  apply(object: KubeObject, options: { dryRun: boolean }) {
    if (options.dryRun) this.dryRuns++;
    else this.writes.push(`apply ${object.kind} ${object.metadata.namespace ?? ""}/${object.metadata.name}`);
    return this.inner.apply(object, options);
  }
  statusReporting(apiVersion: string, kind: string) {
    return this.inner.statusReporting?.(apiVersion, kind) ?? Promise.resolve(undefined);
  }
  namespaceContents(namespace: string) {
    return this.inner.namespaceContents(namespace);
  }
  async probe() {
    try {
      await this.inner.probe?.();
      this.probes.ok++;
    } catch (error) {
      this.probes.failed++;
      throw error;
    }
  }
  serverVersion() {
    return this.inner.serverVersion!();
  }
  readLease(namespace: string, name: string) {
    return this.inner.readLease!(namespace, name);
  }
  writeLease(record: LeaseRecord) {
    return this.inner.writeLease!(record);
  }
  delete(ref: ObjectRef, options?: Parameters<ClusterPort["delete"]>[1]) {
    this.writes.push(`delete ${ref.kind} ${ref.namespace}/${ref.name}`);
    this.deletes.push(ref);
    // The options too (the propagation policy): a wrapper that dropped them sent Background always.
    return this.inner.delete(ref, options);
  }
  watch(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    labelSelector: string,
    onChange: () => void,
    onReconnect?: () => void,
  ) {
    return this.inner.watch!(apiVersion, kind, namespace, labelSelector, onChange, onReconnect);
  }
}

export interface World {
  id: string;
  /** A namespace that exists before the first cycle; the reconciler's default and inventory namespace. */
  ns: string;
  instance: string;
  repo: ConfigRepo;
  admin: KubeCluster;
  kubectl: Kubectl;
  temp: TempDirs;
  /** The port of the last reconciler made without an explicit cluster. */
  counting: CountingCluster;
  settings(overrides?: SettingsOverrides): CycleSettings;
  reconciler(
    overrides?: SettingsOverrides,
    options?: Partial<ReconcilerOptions> & { kubeconfig?: string; requestTimeoutMs?: number },
  ): Reconciler;
  /** Creates a namespace as the admin (the server-side apply kubectl would send). */
  createNamespace(name: string): Promise<void>;
  close(): Promise<void>;
}

export async function createWorld(backend: ClusterBackend): Promise<World> {
  const id = randomBytes(3).toString("hex");
  const temp = new TempDirs();
  const ns = `ct-${id}`;
  const instance = `c${id}`;
  const repo = new ConfigRepo(temp.make("ferry-config-"));
  const admin = KubeCluster.fromOptions({ kubeconfig: backend.kubeconfig() });
  const kubectl = new Kubectl(backend.kubeconfig());
  const reconcilers: Reconciler[] = [];
  const settings = (overrides: SettingsOverrides = {}): CycleSettings => ({
    instance,
    path: "env",
    namespace: ns,
    inventoryNamespace: ns,
    createNamespace: false,
    dryRun: false,
    ...overrides,
    prune: { ...DEFAULT_PRUNE_OPTIONS, prune: true, ...overrides.prune },
  });
  const createNamespace = async (name: string) => {
    await kubectl.ok(["apply", "-f", "-"], {
      stdin: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name } }),
    });
  };
  await createNamespace(ns);
  const world: World = {
    id,
    ns,
    instance,
    repo,
    admin,
    kubectl,
    temp,
    counting: new CountingCluster(admin),
    settings,
    reconciler(overrides = {}, options = {}) {
      const { kubeconfig, requestTimeoutMs, ...rest } = options;
      const port = new CountingCluster(
        kubeconfig
          ? KubeCluster.fromOptions({
              kubeconfig,
              ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}),
            })
          : admin,
      );
      world.counting = port;
      const reconciler = createReconciler({
        cluster: port,
        source: new ConfigRepoFetcher({
          repo: repo.dir,
          ref: "main",
          workDir: temp.make("ferry-work-"),
          env: GIT_ENV,
        }),
        settings: settings(overrides),
        random: () => 0.5,
        ...rest,
      });
      reconcilers.push(reconciler);
      return reconciler;
    },
    createNamespace,
    async close() {
      for (const reconciler of reconcilers) await reconciler.stop();
      kubectl.close();
      temp.cleanup();
    },
  };
  return world;
}

/** resourceVersion and managedFields of each object: unchanged means nothing wrote to it. */
export async function fingerprints(admin: KubeCluster, refs: ObjectRef[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const ref of refs) {
    const live = await admin.get(ref);
    // A controller's status update moves resourceVersion without any write of Ferry's (the
    // simulator's Deployment controller does; kube-controller-manager would): objects with a
    // generation are compared by it (it moves on every spec change), the rest by resourceVersion.
    // managedFields entries for the status subresource belong to controllers and are left out.
    const metadata = live?.metadata as
      | { resourceVersion?: string; generation?: number; managedFields?: { subresource?: string }[] }
      | undefined;
    out[`${ref.kind} ${ref.namespace}/${ref.name}`] = metadata
      ? `${metadata.generation !== undefined ? `generation ${metadata.generation}` : String(metadata.resourceVersion)} ${JSON.stringify((metadata.managedFields ?? []).filter((entry) => entry.subresource !== "status"))}`
      : "absent";
  }
  return out;
}
