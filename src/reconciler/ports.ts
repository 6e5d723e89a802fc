/**
 * What the reconciler needs from the outside world. `src/adapters/kubernetes/` implements the
 * cluster on Node's own HTTP/2 client; tests fake nothing here — they run the real adapter
 * against the cluster simulator (docs/testing.md "Fakes and emulators").
 */
import type { PropagationPolicy } from "./sync-options.js";
import type { KubeObject, ObjectRef, StatusReporting } from "./types.js";

export interface ClusterPort {
  /** Whether the kind is namespaced; undefined when the API server does not serve it (yet). */
  isNamespaced(apiVersion: string, kind: string): Promise<boolean | undefined>;
  /** Objects of one kind carrying `labelSelector`, in one namespace (or cluster-wide for cluster-scoped kinds). */
  list(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    labelSelector: string,
  ): Promise<KubeObject[]>;
  /** undefined when the object does not exist. */
  get(ref: ObjectRef): Promise<KubeObject | undefined>;
  /** Server-side apply with field manager `ferry` and force; `dryRun` asks for `dryRun=All`. */
  apply(object: KubeObject, options: { dryRun: boolean }): Promise<KubeObject>;
  /**
   * Deletes the object (propagationPolicy Background unless told); an object already gone is not an
   * error.
   */
  delete(ref: ObjectRef, options?: { propagationPolicy?: PropagationPolicy }): Promise<void>;
  /**
   * Whether objects of the kind carry a status (a status subresource, or `status` in a CRD's
   * schema): "silent" kinds are Healthy once they exist; undefined when it cannot be told.
   */
  statusReporting?(apiVersion: string, kind: string): Promise<StatusReporting | undefined>;
  /** Every object in the namespace, of every kind that can be listed (events apart). */
  namespaceContents(namespace: string): Promise<NamespaceContents>;
  /** One cheap request that succeeds when the API server answers (`GET /version`). */
  probe?(): Promise<void>;
  /**
   * The build the API server runs (`/version`): with the inventory's uid it names the server the
   * dry-run memory was gathered on; undefined when it cannot tell.
   */
  serverVersion?(): Promise<string | undefined>;
  /** The Lease; undefined when absent. */
  readLease?(namespace: string, name: string): Promise<LeaseRecord | undefined>;
  /**
   * Creates the Lease (no `resourceVersion`) or replaces it only if it is still at
   * `resourceVersion`; throws a `lease-conflict` UserError when someone else wrote it first.
   */
  writeLease?(record: LeaseRecord): Promise<LeaseRecord>;
  /**
   * Calls `onChange` when objects matching the selector change, and `onReconnect` when the watch
   * opens after it broke or after a first attempt that failed (either way the API server answers
   * again); returns a function that stops watching.
   */
  watch?(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    labelSelector: string,
    onChange: () => void,
    onReconnect?: () => void,
  ): Promise<() => void>;
}

export interface NamespaceContents {
  objects: KubeObject[];
  /** Kinds these credentials may not list there (`Secret (v1)`): what they hold is unknown. */
  unreadable: string[];
}

/** A `coordination.k8s.io/v1` Lease, as the reconciler reads and writes it. */
export interface LeaseRecord {
  namespace: string;
  name: string;
  /** Empty when released. */
  holder: string;
  /** Epoch milliseconds. */
  renewTime: number;
  acquireTime: number;
  durationSeconds: number;
  resourceVersion?: string;
}

/** Fetches the config repo; throws when it cannot, keeping the last good checkout. */
export interface ConfigSource {
  fetch(): Promise<{ revision: string; dir: string }>;
  /** The last revision fetched and checked out, still on disk; undefined before the first. */
  lastGood?(): { revision: string; dir: string } | undefined;
  /** Since when every fetch has failed; undefined while the last one succeeded. */
  unreachableSince?(): Date | undefined;
  /**
   * Whether `head` (the revision just fetched) has `ancestor` in its history; false when it
   * cannot tell. Without it every revision change counts as contained (no prune grace period).
   */
  contains?(ancestor: string, head: string): Promise<boolean>;
}

/** Reports the outcome of a cycle to GitHub (Deployments and their statuses). */
export interface DeploymentReporter {
  report(report: DeploymentReport): Promise<void>;
}

export type DeploymentState = "in_progress" | "success" | "failure";

export interface DeploymentReport {
  /** The config commit the state refers to. */
  revision: string;
  state: DeploymentState;
  /** Under 140 characters. */
  description: string;
}

/**
 * The registry reads charts are downloaded with (chart-dependencies.ts, chart-http-repository.ts):
 * the registry client of src/adapters/registry, with its address guard, limits and credentials.
 */
export interface ChartRegistry {
  listTags(repository: string): Promise<string[]>;
  /** A manifest by tag or digest, digest-verified; undefined when the registry has none. */
  manifest(
    repository: string,
    reference: string,
  ): Promise<{ digest: string; json: Record<string, unknown> } | undefined>;
  /** A blob by digest, at most `maxBytes`, verified against its digest. */
  blob(repository: string, digest: string, maxBytes: number): Promise<Buffer>;
  /** A file of a Helm HTTP repository (`index.yaml`, an archive) by absolute URL, at most `maxBytes`. */
  download(url: string, maxBytes: number): Promise<Buffer>;
}
