/**
 * The scan's view of the fleet (`Membership`) and the single-member fleet, apart from the Lease
 * implementation (`lease-membership.ts`) and the Kubernetes adapter it loads: a `ferry serve`
 * outside Kubernetes and without `--kubeconfig` never loads them.
 */
import { existsSync } from "node:fs";
import { hostname } from "node:os";

export interface MembershipSnapshot {
  mode: "kubernetes" | "single";
  self: string;
  /** Live members, sorted; empty when this replica could not renew its own Lease. */
  members: string[];
  namespace?: string;
  leaseDurationMs?: number;
  /** Epoch ms of this replica's last successful renewal. */
  lastRenewedAt?: number;
  /** The last renewal or listing error, if the last attempt failed. */
  lastError?: string;
}

/** The scan's view of the fleet. */
export interface Membership {
  readonly self: string;
  /** Live members (this replica included while its own Lease is fresh), sorted. */
  members(): string[];
  /** Installations any live member announced as very large. */
  largeInstallations(): Set<number>;
  /** Announces installations this member found very large (published on its next renewal). */
  announceLarge(ids: Iterable<number>): void;
  snapshot(): MembershipSnapshot;
  start(): Promise<void>;
  /** Stops renewing and deletes this replica's Lease, so the others take its share at once. */
  stop(): Promise<void>;
}

/** Outside Kubernetes: this process is the whole fleet, as before sharding existed. */
export function singleMembership(self = hostname()): Membership {
  const large = new Set<number>();
  return {
    self,
    members: () => [self],
    largeInstallations: () => large,
    announceLarge: () => undefined,
    snapshot: () => ({ mode: "single", self, members: [self] }),
    start: async () => undefined,
    stop: async () => undefined,
  };
}

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** Where a replica's membership comes from: its environment and `ferry serve --kubeconfig`. */
export interface LeaseSetting {
  env: Record<string, string | undefined>;
  /** `ferry serve --kubeconfig FILE`. */
  kubeconfigFile?: string;
  /** Where the in-cluster service account is mounted (tests point it elsewhere). */
  serviceAccountDir?: string;
}

/** FERRY_MEMBER_NAME, else POD_NAME, else the host name. */
export function memberIdentity(env: Record<string, string | undefined>): string {
  return env.FERRY_MEMBER_NAME || env.POD_NAME || hostname();
}

/** In a pod (in-cluster config) or given `--kubeconfig`: the replicas share the scan through Leases. */
export function needsLeases(setting: LeaseSetting): boolean {
  const saDir = setting.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const inCluster = Boolean(setting.env.KUBERNETES_SERVICE_HOST) && existsSync(`${saDir}/token`);
  return setting.kubeconfigFile !== undefined || inCluster;
}
