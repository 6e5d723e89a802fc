/**
 * The cluster port on Node's own HTTP clients (`kube-transport.ts`: one connection per API server
 * for requests, one for watches): server-side apply (field manager `ferry`, force), dry-run, list,
 * get, delete and watch. API errors are sorted into UserError (the config is wrong:
 * 400/404/409/422, or credentials: 401/403) and TransientError (429, 5xx, network).
 */
import { createInterface } from "node:readline";
import { TransientError, UserError } from "../../core/errors.js";
import { apiVersionOf, describeRef } from "../../reconciler/object-ref.js";
import type { ClusterPort, LeaseRecord, NamespaceContents } from "../../reconciler/ports.js";
import type { KubeObject, ObjectRef, StatusReporting } from "../../reconciler/types.js";
import type { PropagationPolicy } from "../../reconciler/sync-options.js";
import { loadClusterAccess, type ClusterAccess, type ClusterAccessOptions } from "./cluster-access.js";
import { KubeLeases } from "./kube-lease.js";
import { apiVersionPath, KubeObjects, type ObjectHeader } from "./kube-objects.js";
import { DEFAULT_REQUEST_TIMEOUT_MS, KubeApiError, KubeTransport, statusOf } from "./kube-transport.js";
import { listNamespaceContents } from "./namespace-contents.js";

export { DEFAULT_REQUEST_TIMEOUT_MS } from "./kube-transport.js";

export interface KubeClusterOptions extends ClusterAccessOptions {
  /** Objects per list page (`limit`, then `continue`); default 500. */
  listPageSize?: number;
  /** Deadline of each request (watches apart), default 30 s. */
  requestTimeoutMs?: number;
}

/**
 * How long a watch may stay silent before it is reopened. A shorter wait would reopen every quiet
 * watch often; the server ends watches itself every 30-60 minutes.
 */
const WATCH_IDLE_TIMEOUT_MS = 10 * 60_000;
/** One watch event holds one object (etcd keeps each under 1.5 MiB): a longer line is refused. */
const MAX_WATCH_LINE_BYTES = 16 * 1024 * 1024;

function apiMessage(error: unknown): string {
  if (error instanceof KubeApiError) {
    const message = (error.body as { message?: unknown } | undefined)?.message;
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

function headerOf(ref: ObjectRef): ObjectHeader {
  return {
    apiVersion: apiVersionOf(ref),
    kind: ref.kind,
    metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
  };
}

export class KubeCluster implements ClusterPort {
  private readonly transport: KubeTransport;
  private readonly api: KubeObjects;
  private readonly leases: KubeLeases;

  constructor(
    readonly access: ClusterAccess,
    private readonly listPageSize = 500,
    requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
  ) {
    this.transport = new KubeTransport(access, requestTimeoutMs);
    this.api = new KubeObjects(this.transport);
    this.leases = new KubeLeases(this.transport);
  }

  static fromOptions(options: KubeClusterOptions): KubeCluster {
    return new KubeCluster(loadClusterAccess(options), options.listPageSize, options.requestTimeoutMs);
  }

  /** Closes the connections to the API server. */
  close(): void {
    this.transport.close();
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
    if ((await this.api.discoveredNames(apiVersion)).includes(`${resource.name}/status`)) return "reports";
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
        const page = await this.api.listPage(apiVersion, kind, namespace, {
          labelSelector,
          limit: this.listPageSize,
          ...(continueToken ? { continue: continueToken } : {}),
        });
        for (const item of page.items) items.push({ ...item, apiVersion, kind });
        continueToken = page.continue;
      } while (continueToken);
      return items;
    } catch (error) {
      throw toFerryError(error, `list ${kind} ${namespace ?? "(all namespaces)"}`);
    }
  }

  async get(ref: ObjectRef): Promise<KubeObject | undefined> {
    try {
      return await this.api.read(headerOf(ref));
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw toFerryError(error, `get ${describeRef(ref)}`);
    }
  }

  async apply(object: KubeObject, options: { dryRun: boolean }): Promise<KubeObject> {
    try {
      return await this.api.serverSideApply(object, options.dryRun);
    } catch (error) {
      const ref = `${object.kind} ${object.metadata.namespace ? `${object.metadata.namespace}/` : ""}${object.metadata.name}`;
      throw toFerryError(error, `${options.dryRun ? "dry-run apply" : "apply"} ${ref}`);
    }
  }

  async delete(ref: ObjectRef, options: { propagationPolicy?: PropagationPolicy } = {}): Promise<void> {
    try {
      // Background propagation unless told (kubectl's default): dependents are collected by Kubernetes' garbage collector.
      await this.api.delete(headerOf(ref), options.propagationPolicy ?? "Background");
    } catch (error) {
      if (statusOf(error) === 404) return;
      throw toFerryError(error, `delete ${describeRef(ref)}`);
    }
  }

  async serverVersion(): Promise<string | undefined> {
    try {
      return await this.leases.serverVersion();
    } catch (error) {
      throw toFerryError(error, "get /version");
    }
  }

  async readLease(namespace: string, name: string): Promise<LeaseRecord | undefined> {
    try {
      return await this.leases.read(namespace, name);
    } catch (error) {
      throw toFerryError(error, `get Lease ${namespace}/${name}`);
    }
  }

  async writeLease(record: LeaseRecord): Promise<LeaseRecord> {
    try {
      return await this.leases.write(record);
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
    const path =
      namespace && resource.namespaced
        ? `${apiVersionPath(apiVersion)}/namespaces/${encodeURIComponent(namespace)}/${resource.name}`
        : `${apiVersionPath(apiVersion)}/${resource.name}`;
    let stopped = false;
    let controller: AbortController | undefined;
    /** Opened once, or failed to: any later open is a reconnect. */
    let tried = false;
    const again = () => {
      // The server ends watches now and then; reopen after a pause instead of hammering it.
      if (!stopped) setTimeout(() => void start(), 5_000).unref();
    };
    const start = async (): Promise<void> => {
      if (stopped) return;
      const current = new AbortController();
      controller = current;
      // Opening is held to the request deadline; once open, only the idle timer ends a watch.
      const opening = setTimeout(() => current.abort(), this.transport.timeoutMs);
      try {
        const reopening = tried;
        tried = true;
        const body = await this.transport.stream(
          { method: "GET", path, query: { watch: "true", allowWatchBookmarks: "false", labelSelector } },
          current.signal,
        );
        clearTimeout(opening);
        if (reopening && !stopped) onReconnect();
        void this.follow(body, current, onChange).then(again);
      } catch {
        clearTimeout(opening);
        again();
      }
    };
    await start();
    return () => {
      stopped = true;
      controller?.abort();
    };
  }

  /** Reads a watch's events until it ends, is aborted, stays silent too long or sends a line too long. */
  private async follow(
    body: NodeJS.ReadableStream & { destroy(): void },
    controller: AbortController,
    onChange: () => void,
  ): Promise<void> {
    let idle = setTimeout(() => controller.abort(), WATCH_IDLE_TIMEOUT_MS);
    idle.unref();
    const lines = createInterface({ input: body, crlfDelay: Infinity });
    // readline waits for an "end" that a destroyed stream (its connection cut) never emits.
    body.once("close", () => lines.close());
    body.once("error", () => lines.close());
    let pending = 0;
    body.on("data", (chunk: Buffer) => {
      pending += chunk.length;
      if (pending > MAX_WATCH_LINE_BYTES) controller.abort();
    });
    try {
      for await (const line of lines) {
        pending = 0;
        clearTimeout(idle);
        idle = setTimeout(() => controller.abort(), WATCH_IDLE_TIMEOUT_MS);
        idle.unref();
        if (line.trim() === "") continue;
        let type: unknown;
        try {
          type = (JSON.parse(line) as { type?: unknown }).type;
        } catch {
          break;
        }
        // The initial ADDED events replay what exists; any of them may be drift, so all count.
        if (type === "ADDED" || type === "MODIFIED" || type === "DELETED") onChange();
        // An ERROR event (410 Gone: the resource version expired) ends this watch; it is reopened.
        if (type === "ERROR") break;
      }
    } catch {
      // aborted or the connection ended: reopened by the caller
    } finally {
      clearTimeout(idle);
      controller.abort();
      body.destroy();
    }
  }
}
