/**
 * The reconciler's path Lease and the API server's version over client-node's typed clients
 * (no discovery request: both resources are fixed). A write that loses a race (409) is a
 * `lease-conflict`: someone else renewed or took the Lease first.
 */
import {
  ApiException,
  CoordinationV1Api,
  KubeConfig,
  V1MicroTime,
  VersionApi,
  type V1Lease,
} from "@kubernetes/client-node";
import { UserError } from "../../core/errors.js";
import type { LeaseRecord } from "../../reconciler/ports.js";

function recordOf(lease: V1Lease, namespace: string, name: string): LeaseRecord {
  const time = (value: unknown) => (value ? new Date(value as string | Date).getTime() : 0);
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

export class KubeLeases {
  private readonly coordination: CoordinationV1Api;
  private readonly version: VersionApi;

  constructor(config: KubeConfig) {
    this.coordination = config.makeApiClient(CoordinationV1Api);
    this.version = config.makeApiClient(VersionApi);
  }

  async read(namespace: string, name: string): Promise<LeaseRecord | undefined> {
    try {
      return recordOf(await this.coordination.readNamespacedLease({ name, namespace }), namespace, name);
    } catch (error) {
      if (error instanceof ApiException && error.code === 404) return undefined;
      throw error;
    }
  }

  async write(record: LeaseRecord): Promise<LeaseRecord> {
    const { namespace, name } = record;
    const body: V1Lease = {
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
        acquireTime: new V1MicroTime(record.acquireTime),
        renewTime: new V1MicroTime(record.renewTime),
      },
    };
    try {
      const written = record.resourceVersion
        ? await this.coordination.replaceNamespacedLease({ name, namespace, body })
        : await this.coordination.createNamespacedLease({ namespace, body });
      return recordOf(written, namespace, name);
    } catch (error) {
      if (error instanceof ApiException && error.code === 409)
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
    const version = await this.version.getCode();
    return version.gitVersion || undefined;
  }
}
