/**
 * The reconciler's path Lease and the API server's version (no discovery request: both resources
 * are fixed). A write that loses a race (409) is a `lease-conflict`: someone else renewed or took
 * the Lease first.
 */
import { UserError } from "../../core/errors.js";
import type { LeaseRecord } from "../../reconciler/ports.js";
import { statusOf, type KubeTransport } from "./kube-transport.js";

/** A `coordination.k8s.io/v1` Lease, the fields Ferry reads and writes. */
export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: {
    holderIdentity?: string;
    renewTime?: string;
    acquireTime?: string;
    leaseDurationSeconds?: number;
  };
}

/** A MicroTime as the API server writes one: RFC 3339 with six fractional digits. */
export function microTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

function recordOf(lease: Lease, namespace: string, name: string): LeaseRecord {
  const time = (value: string | undefined) => (value ? new Date(value).getTime() : 0);
  return {
    namespace,
    name,
    holder: lease.spec?.holderIdentity ?? "",
    renewTime: time(lease.spec?.renewTime),
    acquireTime: time(lease.spec?.acquireTime),
    durationSeconds: lease.spec?.leaseDurationSeconds ?? 0,
    ...(lease.metadata?.resourceVersion ? { resourceVersion: lease.metadata.resourceVersion } : {}),
  };
}

const leasesPath = (namespace: string) =>
  `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;

/** The Lease calls, as JSON: a failed one is the transport's KubeApiError (404, 409, ...). */
export class LeaseApi {
  constructor(private readonly transport: KubeTransport) {}

  async read(namespace: string, name: string): Promise<Lease> {
    const path = `${leasesPath(namespace)}/${encodeURIComponent(name)}`;
    return (await this.transport.request({ method: "GET", path })) as Lease;
  }

  async create(namespace: string, body: Lease): Promise<Lease> {
    return (await this.transport.request({
      method: "POST",
      path: leasesPath(namespace),
      contentType: "application/json",
      body: JSON.stringify(body),
    })) as Lease;
  }

  async replace(namespace: string, name: string, body: Lease): Promise<Lease> {
    return (await this.transport.request({
      method: "PUT",
      path: `${leasesPath(namespace)}/${encodeURIComponent(name)}`,
      contentType: "application/json",
      body: JSON.stringify(body),
    })) as Lease;
  }

  async list(namespace: string, labelSelector: string): Promise<Lease[]> {
    const list = (await this.transport.request({
      method: "GET",
      path: leasesPath(namespace),
      query: { labelSelector },
    })) as { items?: Lease[] };
    return list.items ?? [];
  }

  /** Deletes the Lease, only at `resourceVersion` when given (someone else's newer write stays). */
  async delete(namespace: string, name: string, resourceVersion?: string): Promise<void> {
    await this.transport.request({
      method: "DELETE",
      path: `${leasesPath(namespace)}/${encodeURIComponent(name)}`,
      ...(resourceVersion
        ? { contentType: "application/json", body: JSON.stringify({ preconditions: { resourceVersion } }) }
        : {}),
    });
  }
}

export class KubeLeases {
  private readonly api: LeaseApi;

  constructor(private readonly transport: KubeTransport) {
    this.api = new LeaseApi(transport);
  }

  async read(namespace: string, name: string): Promise<LeaseRecord | undefined> {
    try {
      return recordOf(await this.api.read(namespace, name), namespace, name);
    } catch (error) {
      if (statusOf(error) === 404) return undefined;
      throw error;
    }
  }

  async write(record: LeaseRecord): Promise<LeaseRecord> {
    const { namespace, name } = record;
    const body: Lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name,
        namespace,
        labels: { "app.kubernetes.io/name": "ferry", "app.kubernetes.io/component": "reconciler-path" },
        ...(record.resourceVersion ? { resourceVersion: record.resourceVersion } : {}),
      },
      spec: {
        holderIdentity: record.holder,
        leaseDurationSeconds: record.durationSeconds,
        acquireTime: microTime(record.acquireTime),
        renewTime: microTime(record.renewTime),
      },
    };
    try {
      const written = record.resourceVersion
        ? await this.api.replace(namespace, name, body)
        : await this.api.create(namespace, body);
      return recordOf(written, namespace, name);
    } catch (error) {
      if (statusOf(error) === 409)
        throw new UserError(
          "lease-conflict",
          `Lease ${namespace}/${name} was written by someone else first`,
          {
            cause: error,
          },
        );
      throw error;
    }
  }

  /** `GET /version`: the build the API server runs (`gitVersion`, e.g. v1.34.4). */
  async serverVersion(): Promise<string | undefined> {
    const version = (await this.transport.request({ method: "GET", path: "/version" })) as {
      gitVersion?: string;
    };
    return version.gitVersion || undefined;
  }
}
