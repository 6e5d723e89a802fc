/**
 * Who is scanning: one `coordination.k8s.io/v1` Lease per `ferry serve` replica, labelled for
 * Ferry, renewed on a short interval; the live members are the Leases whose record changed within
 * their `leaseDurationSeconds`. This is the same engine Kubernetes' own components use for
 * liveness (kube-node-lease, client-go leaderelection), with one Lease per member instead of one
 * per group, so membership needs no election.
 *
 * Liveness of another member is judged on this replica's own clock, from when its Lease record
 * was last seen to change (as client-go's leaderelection does with `observedTime`), so clock skew
 * between nodes does not matter. A replica whose own renewal has failed for a whole lease duration
 * counts itself out (an empty member list, so it scans nothing) until it renews again: by then the
 * others have seen its Lease stop changing and taken its share.
 */
import { existsSync, readFileSync } from "node:fs";
import { inClusterAccess, loadClusterAccess, type ClusterAccess } from "./cluster-access.js";
import { LeaseApi, microTime, type Lease } from "./kube-lease.js";
import { KubeTransport, statusOf } from "./kube-transport.js";
import {
  memberIdentity,
  needsLeases,
  singleMembership,
  SERVICE_ACCOUNT_DIR,
  type LeaseSetting,
  type Membership,
} from "./membership.js";
import { parseDurationWithin } from "../../core/duration.js";

/** Labels on every Ferry membership Lease; members are listed by this selector. */
export const MEMBERSHIP_LABELS = {
  "app.kubernetes.io/name": "ferry",
  "app.kubernetes.io/component": "scan-membership",
} as const;
const LABEL_SELECTOR = Object.entries(MEMBERSHIP_LABELS)
  .map(([key, value]) => `${key}=${value}`)
  .join(",");
/** Installations this member found to be very large (split by repository among all members). */
export const LARGE_INSTALLATIONS_ANNOTATION = "ferry.dev/large-installations";

export interface LeaseMembershipOptions {
  /** The API server and credentials (`cluster-access.ts`). */
  access: ClusterAccess;
  namespace: string;
  /** This replica's name (the pod name in a Deployment). */
  identity: string;
  /** Default 15 s (rounded up to whole seconds: the Lease field is in seconds). */
  leaseDurationMs?: number;
  /** Default a third of the lease duration. */
  renewIntervalMs?: number;
  /** One API request longer than this counts as failed (default half the lease duration). */
  requestTimeoutMs?: number;
  now?: () => number;
  log?: { info(fields: object, message: string): void; warn(fields: object, message: string): void };
}

interface Observed {
  holder: string;
  record: string;
  observedAt: number;
  durationMs: number;
  large: number[];
}

/** A Lease name for an identity: DNS-1123 subdomain, at most 253 characters. */
export function leaseNameFor(identity: string): string {
  const cleaned = identity
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, "");
  return `ferry-scan-${cleaned || "member"}`.slice(0, 253);
}

export function leaseMembership(options: LeaseMembershipOptions): Membership {
  const now = options.now ?? Date.now;
  const durationMs = Math.max(1, Math.ceil((options.leaseDurationMs ?? 15_000) / 1000)) * 1000;
  const renewIntervalMs = options.renewIntervalMs ?? Math.max(200, Math.floor(durationMs / 3));
  const timeoutMs = options.requestTimeoutMs ?? Math.max(1000, durationMs / 2);
  const { namespace, identity } = options;
  const name = leaseNameFor(identity);
  // Every request under the deadline; one that meets it retires its connection.
  const transport = new KubeTransport(options.access, timeoutMs);
  const leases = new LeaseApi(transport);
  const api = {
    read: () => leases.read(namespace, name),
    create: (body: Lease) => leases.create(namespace, body),
    replace: (body: Lease) => leases.replace(namespace, name, body),
    list: () => leases.list(namespace, LABEL_SELECTOR),
    delete: (resourceVersion: string | undefined) => leases.delete(namespace, name, resourceVersion),
  };
  const observed = new Map<string, Observed>();
  const announced = new Set<number>();
  let own: Lease | undefined;
  let lastRenewedAt: number | undefined;
  let lastError: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let ticking: Promise<void> = Promise.resolve();

  const leaseBody = (): Lease => {
    const at = microTime(now());
    return {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name,
        namespace,
        labels: { ...MEMBERSHIP_LABELS },
        annotations: { [LARGE_INSTALLATIONS_ANNOTATION]: [...announced].sort((a, b) => a - b).join(",") },
        ...(own?.metadata?.resourceVersion ? { resourceVersion: own.metadata.resourceVersion } : {}),
      },
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds: durationMs / 1000,
        acquireTime: own?.spec?.acquireTime ?? at,
        renewTime: at,
      },
    };
  };

  const renew = async (): Promise<void> => {
    if (own) {
      try {
        own = await api.replace(leaseBody());
        return;
      } catch (error) {
        // Conflict (someone else wrote it) or gone (deleted): start again from a create.
        const code = statusOf(error);
        if (code !== 409 && code !== 404) throw error;
        own = undefined;
        if (code === 409) {
          own = await api.read();
          own = await api.replace(leaseBody());
          return;
        }
      }
    }
    try {
      own = await api.create(leaseBody());
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
      own = await api.read();
      own = await api.replace(leaseBody());
    }
  };

  const observe = async (): Promise<void> => {
    const items = await api.list();
    const at = now();
    const seen = new Set<string>();
    for (const lease of items) {
      const key = lease.metadata?.name;
      const holder = lease.spec?.holderIdentity;
      if (!key || !holder) continue;
      seen.add(key);
      const renewTime = lease.spec?.renewTime ? new Date(lease.spec.renewTime).getTime() : 0;
      const leaseMs = (lease.spec?.leaseDurationSeconds ?? durationMs / 1000) * 1000;
      const record = `${holder}|${renewTime}|${lease.metadata?.resourceVersion ?? ""}`;
      const previous = observed.get(key);
      const large = (lease.metadata?.annotations?.[LARGE_INSTALLATIONS_ANNOTATION] ?? "")
        .split(",")
        .map(Number)
        .filter((id) => Number.isSafeInteger(id) && id > 0);
      if (previous && previous.record === record) {
        previous.large = large;
        continue;
      }
      // First sight of a Lease: a record already older than its duration (by the writer's clock)
      // is a leftover of a dead replica, not a member; otherwise it is live from now on.
      const observedAt = !previous && renewTime + leaseMs < at ? renewTime : at;
      observed.set(key, { holder, record, observedAt, durationMs: leaseMs, large });
    }
    for (const key of observed.keys()) if (!seen.has(key)) observed.delete(key);
  };

  const tick = async (): Promise<void> => {
    try {
      // The renewal counts from when it was sent: the others may see it change before its answer
      // comes back, and this replica must count itself out no later than they do.
      const sentAt = now();
      await renew();
      lastRenewedAt = sentAt;
      await observe();
      lastError = undefined;
    } catch (error) {
      const message = (error as Error).message;
      if (lastError === undefined)
        options.log?.warn({ lease: `${namespace}/${name}`, error: message }, "membership: renewal failed");
      lastError = message;
    }
  };

  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      ticking = tick().finally(schedule);
    }, renewIntervalMs);
    timer.unref();
  };

  const selfLive = (): boolean => lastRenewedAt !== undefined && now() - lastRenewedAt < durationMs;

  const liveObserved = (): Observed[] => {
    const at = now();
    return [...observed.values()].filter((entry) => at - entry.observedAt < entry.durationMs);
  };

  const members = (): string[] => {
    if (!selfLive()) return [];
    const live = new Set(liveObserved().map((entry) => entry.holder));
    live.add(identity);
    return [...live].sort();
  };

  return {
    self: identity,
    members,
    largeInstallations: () => {
      const result = new Set<number>(announced);
      if (selfLive()) for (const entry of liveObserved()) for (const id of entry.large) result.add(id);
      return result;
    },
    announceLarge(ids) {
      for (const id of ids) announced.add(id);
    },
    snapshot: () => ({
      mode: "kubernetes",
      self: identity,
      members: members(),
      namespace,
      leaseDurationMs: durationMs,
      ...(lastRenewedAt !== undefined ? { lastRenewedAt } : {}),
      ...(lastError !== undefined ? { lastError } : {}),
    }),
    async start() {
      await tick();
      options.log?.info(
        { lease: `${namespace}/${name}`, leaseDurationMs: durationMs, members: members() },
        lastError === undefined
          ? "membership: holding a Lease; the periodic scan is shared among the live members"
          : "membership: could not create the Lease yet; not scanning until it is renewed",
      );
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await ticking;
      lastRenewedAt = undefined;
      try {
        await api.delete(own?.metadata?.resourceVersion);
      } catch {
        // Gone already, or unreachable: it expires by itself.
      }
    },
  };
}

/**
 * FERRY_LEASE_DURATION, renewed every third of it: at least a second, at most an hour (a dead
 * replica's share waits that long for another member).
 */
function leaseDuration(text: string): number {
  return parseDurationWithin("FERRY_LEASE_DURATION", text, 1000, 60 * 60 * 1000);
}

export interface MembershipFromEnvOptions extends LeaseSetting {
  log?: LeaseMembershipOptions["log"];
}

/**
 * Lease membership when Ferry runs in a pod (in-cluster config) or was given `--kubeconfig`;
 * otherwise the single-member fleet. FERRY_LEASE_NAMESPACE (default: the pod's namespace, then
 * the kubeconfig context's, then `default`), FERRY_MEMBER_NAME (default POD_NAME, then the host
 * name) and FERRY_LEASE_DURATION (default 15s) tune it.
 */
export function membershipFromEnv(options: MembershipFromEnvOptions): Membership {
  const { env } = options;
  const identity = memberIdentity(env);
  const saDir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  if (!needsLeases(options)) return singleMembership(identity);
  const access =
    options.kubeconfigFile !== undefined
      ? loadClusterAccess({ kubeconfigFile: options.kubeconfigFile })
      : inClusterAccess(saDir, env);
  const podNamespace = existsSync(`${saDir}/namespace`)
    ? readFileSync(`${saDir}/namespace`, "utf8").trim()
    : undefined;
  const contextNamespace = access.namespace;
  const namespace =
    env.FERRY_LEASE_NAMESPACE || env.POD_NAMESPACE || podNamespace || contextNamespace || "default";
  return leaseMembership({
    access,
    namespace,
    identity,
    ...(env.FERRY_LEASE_DURATION ? { leaseDurationMs: leaseDuration(env.FERRY_LEASE_DURATION) } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
}
