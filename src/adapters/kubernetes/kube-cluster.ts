/**
 * The cluster port over @kubernetes/client-node 2.x, on one shared connection per API server
 * (`shared-connection.ts`): server-side apply (field manager `ferry`,
 * force), dry-run, list, get, delete and watch. API errors are sorted into UserError (the config
 * is wrong: 400/404/409/422, or credentials: 401/403) and TransientError (429, 5xx, network).
 */
import { ApiException, KubeConfig, Watch } from "@kubernetes/client-node";
import { TransientError, UserError } from "../../core/errors.js";
import { apiVersionOf, describeRef } from "../../reconciler/object-ref.js";
import type { ClusterPort, LeaseRecord, NamespaceContents } from "../../reconciler/ports.js";
import type { KubeObject, ObjectRef, StatusReporting } from "../../reconciler/types.js";
import { KubeLeases } from "./kube-lease.js";
import { listNamespaceContents } from "./namespace-contents.js";
import { DEFAULT_REQUEST_TIMEOUT_MS, RawObjectApi, withinDeadline } from "./raw-object-api.js";
import { SharedConnectionKubeConfig } from "./shared-connection.js";
import type { PropagationPolicy } from "../../reconciler/sync-options.js";

export { DEFAULT_REQUEST_TIMEOUT_MS } from "./raw-object-api.js";

export interface KubeClusterOptions {
  /** Kubeconfig YAML (e.g. the simulator's); otherwise `kubeconfigFile`, otherwise in-cluster/default loading. */
  kubeconfig?: string;
  kubeconfigFile?: string;
  /** Objects per list page (`limit`, then `continue`); default 500. */
  listPageSize?: number;
  /** Deadline of each request (watches apart), default 30 s. */
  requestTimeoutMs?: number;
}

/**
 * How long a watch may stay silent before it is reopened. client-node's default, 30 s, would
 * reopen every quiet watch twice a minute; the server ends watches itself every 30-60 minutes.
 */
const WATCH_IDLE_TIMEOUT_MS = 10 * 60_000;

export function loadKubeConfig(options: KubeClusterOptions): SharedConnectionKubeConfig {
  const config = new SharedConnectionKubeConfig();
  if (options.kubeconfig !== undefined) config.loadFromString(options.kubeconfig);
  else if (options.kubeconfigFile !== undefined) config.loadFromFile(options.kubeconfigFile);
  // In a pod: the service-account token and KUBERNETES_SERVICE_HOST; elsewhere ~/.kube/config.
  else {
    config.loadFromDefault();
    // With none of those, the library falls back to an unauthenticated http://localhost:8080,
    // which only surfaces later as an obscure "HTTP protocol is not allowed" in the first cycle.
    const cluster = config.getCurrentCluster();
    if (
      config.getCurrentContext() === "loaded-context" &&
      cluster?.name === "cluster" &&
      cluster.server === "http://localhost:8080"
    ) {
      throw new Error(
        "no kubeconfig found: pass --kubeconfig FILE, set KUBECONFIG, or run in a pod with a service account",
      );
    }
  }
  return config;
}

function statusOf(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

function apiMessage(error: unknown): string {
  if (error instanceof ApiException) {
    let body: unknown = error.body;
    if (typeof body === "string") {
      try {
        body = JSON.parse(body);
      } catch {
        // a plain-text body is its own message
      }
    }
    const message = (body as { message?: unknown } | undefined)?.message;
    return typeof message === "string" ? message : `HTTP ${error.code}`;
  }
  return (error as Error).message;
}

/** Sorts an API failure: the caller aborts the cycle either way, but only transient ones back off quickly. */
export function toFerryError(error: unknown, action: string): Error {
  const status = statusOf(error);
  const message = `${action}: ${apiMessage(error)}`;
  // kube-apiserver answers a server-side apply with a field its schema does not declare with a
  // 500, not a 4xx: the manifest is wrong and no retry will fix it.
  if (status === 500 && /failed to create typed patch object|field not declared in schema/.test(message))
    return new UserError("kubernetes-rejected", message, { cause: error });
  if (status === undefined || status === 429 || status >= 500)
    return new TransientError("kubernetes-unavailable", message, { cause: error });
  // A 401 (credentials not accepted) fails the cycle; a 403 (RBAC) refuses that kind's objects only.
  if (status === 401) return new UserError("kubernetes-unauthorized", message, { cause: error });
  if (status === 403) return new UserError("kubernetes-forbidden", message, { cause: error });
  if (status === 404) return new UserError("kubernetes-not-found", message, { cause: error });
  return new UserError("kubernetes-rejected", message, { cause: error });
}

/** Turns client-node's typed models (Date objects and all) back into plain JSON. */
function plain<T>(value: T): KubeObject {
  return JSON.parse(JSON.stringify(value)) as KubeObject;
}

export class KubeCluster implements ClusterPort {
  private readonly api: RawObjectApi;
  private readonly watcher: Watch;
  private readonly leases: KubeLeases;

  constructor(
    readonly config: KubeConfig,
    private readonly listPageSize = 500,
    requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
  ) {
    this.api = config.makeApiClient(RawObjectApi);
    this.api.timeoutMs = requestTimeoutMs;
    this.watcher = new Watch(config instanceof SharedConnectionKubeConfig ? config.forWatches() : config);
    // The field is private in client-node's types, public in its code (its only knob).
    (this.watcher as unknown as { requestTimeoutMs: number }).requestTimeoutMs = WATCH_IDLE_TIMEOUT_MS;
    this.leases = new KubeLeases(config);
  }

  static fromOptions(options: KubeClusterOptions): KubeCluster {
    return new KubeCluster(loadKubeConfig(options), options.listPageSize, options.requestTimeoutMs);
  }

  async probe(): Promise<void> {
    try {
      await this.api.getJson("/version");
    } catch (error) {
      throw toFerryError(error, "probe the API server");
    }
  }

  async namespaceContents(namespace: string): Promise<NamespaceContents> {
    try {
      return await listNamespaceContents(
        (path) => this.api.getJson(path),
        (error) => statusOf(error) === 403,
        namespace,
        this.listPageSize,
      );
    } catch (error) {
      throw toFerryError(error, `list the contents of namespace ${namespace}`);
    }
  }

  async isNamespaced(apiVersion: string, kind: string): Promise<boolean | undefined> {
    try {
      const resource = await this.api.discover(apiVersion, kind);
      return resource?.namespaced;
    } catch (error) {
      // An unknown group/version is a 404 from discovery: the kind is not served (yet).
      if (statusOf(error) === 404) return undefined;
      throw toFerryError(error, `discover ${apiVersion} ${kind}`);
    }
  }

  /** Per `apiVersion/kind`, as long as the process lives: discovery and CRD schemas rarely change. */
  private readonly statusKinds = new Map<string, Promise<StatusReporting | undefined>>();

  statusReporting(apiVersion: string, kind: string): Promise<StatusReporting | undefined> {
    const key = `${apiVersion}/${kind}`;
    let known = this.statusKinds.get(key);
    if (!known) {
      known = this.readStatusReporting(apiVersion, kind).catch(() => undefined);
      this.statusKinds.set(key, known);
      // No answer (a kind not served yet, a CRD created later in the cycle) is asked again next time.
      void known.then((answer) => {
        if (answer === undefined && this.statusKinds.get(key) === known) this.statusKinds.delete(key);
      });
    }
    return known;
  }

  /** A status subresource in discovery; else, for a custom resource, `status` in its CRD's schema. */
  private async readStatusReporting(apiVersion: string, kind: string): Promise<StatusReporting | undefined> {
    const resource = await this.api.discover(apiVersion, kind);
    if (!resource) return undefined;
    if (this.api.discoveredNames(apiVersion).includes(`${resource.name}/status`)) return "reports";
    const slash = apiVersion.indexOf("/");
    const group = slash === -1 ? "" : apiVersion.slice(0, slash);
    // Built-in kinds without a status subresource (ConfigMap, Role, ...) never carry one.
    if (!group.includes(".") || group.endsWith(".k8s.io")) return "silent";
    const crd = await this.get({
      group: "apiextensions.k8s.io",
      version: "v1",
      kind: "CustomResourceDefinition",
      namespace: "",
      name: `${resource.name}.${group}`,
    });
    const spec = crd?.spec as { versions?: unknown } | undefined;
    const versions = Array.isArray(spec?.versions) ? (spec.versions as Record<string, unknown>[]) : [];
    const version = versions.find((entry) => entry.name === apiVersion.slice(slash + 1));
    const schema = (version?.schema as { openAPIV3Schema?: Record<string, unknown> } | undefined)
      ?.openAPIV3Schema;
    if (!schema || schema["x-kubernetes-preserve-unknown-fields"] === true) return undefined;
    const properties = schema.properties as Record<string, unknown> | undefined;
    return properties?.status !== undefined ? "reports" : "silent";
  }

  async list(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    labelSelector: string,
  ): Promise<KubeObject[]> {
    try {
      const items: KubeObject[] = [];
      let continueToken: string | undefined;
      do {
        const page = await this.api.list(
          apiVersion,
          kind,
          namespace,
          undefined,
          undefined,
          undefined,
          undefined,
          labelSelector,
          this.listPageSize,
          continueToken,
        );
        for (const item of page.items) items.push({ ...plain(item), apiVersion, kind });
        // Plain JSON now (see RawObjectApi): the field is `continue`, which the typed model renamed `_continue`.
        const metadata = page.metadata as { continue?: string; _continue?: string } | undefined;
        continueToken = metadata?.continue || metadata?._continue || undefined;
      } while (continueToken);
      return items;
    } catch (error) {
      throw toFerryError(error, `list ${kind} ${namespace ?? "(all namespaces)"}`);
    }
  }

  async get(ref: ObjectRef): Promise<KubeObject | undefined> {
    try {
      const header = {
        apiVersion: apiVersionOf(ref),
        kind: ref.kind,
        metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
      };
      return plain(await this.api.read(header));
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw toFerryError(error, `get ${describeRef(ref)}`);
    }
  }

  async apply(object: KubeObject, options: { dryRun: boolean }): Promise<KubeObject> {
    try {
      const result = await this.api.serverSideApply(object, options.dryRun);
      return plain(result);
    } catch (error) {
      const ref = `${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ""}${object.metadata.name}`;
      throw toFerryError(error, `${options.dryRun ? "dry-run apply" : "apply"} ${ref}`);
    }
  }

  async delete(ref: ObjectRef, options: { propagationPolicy?: PropagationPolicy } = {}): Promise<void> {
    try {
      const header = {
        apiVersion: apiVersionOf(ref),
        kind: ref.kind,
        metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
      };
      // Background propagation unless told (kubectl's default): dependents are collected by Kubernetes' garbage collector.
      const policy = options.propagationPolicy ?? "Background";
      await this.api.delete(header, undefined, undefined, undefined, undefined, policy);
    } catch (error) {
      if (statusOf(error) === 404) return;
      throw toFerryError(error, `delete ${describeRef(ref)}`);
    }
  }

  async serverVersion(): Promise<string | undefined> {
    try {
      return await withinDeadline(this.api.timeoutMs, this.leases.serverVersion());
    } catch (error) {
      throw toFerryError(error, "get /version");
    }
  }

  async readLease(namespace: string, name: string): Promise<LeaseRecord | undefined> {
    try {
      return await withinDeadline(this.api.timeoutMs, this.leases.read(namespace, name));
    } catch (error) {
      throw toFerryError(error, `get Lease ${namespace}/${name}`);
    }
  }

  async writeLease(record: LeaseRecord): Promise<LeaseRecord> {
    try {
      return await withinDeadline(this.api.timeoutMs, this.leases.write(record));
    } catch (error) {
      if ((error as { code?: string }).code === "lease-conflict") throw error;
      throw toFerryError(error, `write Lease ${record.namespace}/${record.name}`);
    }
  }

  async watch(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    labelSelector: string,
    onChange: () => void,
    onReconnect: () => void = () => {},
  ): Promise<() => void> {
    const resource = await this.api.discover(apiVersion, kind);
    if (!resource) return () => {};
    const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const path =
      namespace && resource.namespaced
        ? `${base}/namespaces/${namespace}/${resource.name}`
        : `${base}/${resource.name}`;
    let stopped = false;
    let controller: AbortController | undefined;
    let opened = false;
    const start = async (): Promise<void> => {
      if (stopped) return;
      try {
        const reopening = opened;
        controller = await this.watcher.watch(
          path,
          { labelSelector },
          (phase) => {
            // The initial ADDED events replay what exists; any of them may be drift, so all count.
            if (phase === "ADDED" || phase === "MODIFIED" || phase === "DELETED") onChange();
          },
          () => {
            // The server ends watches now and then; reopen after a pause instead of hammering it.
            if (!stopped) setTimeout(() => void start(), 5_000).unref();
          },
        );
        opened = true;
        if (reopening && !stopped) onReconnect();
      } catch {
        if (!stopped) setTimeout(() => void start(), 5_000).unref();
      }
    };
    await start();
    return () => {
      stopped = true;
      controller?.abort();
    };
  }
}
