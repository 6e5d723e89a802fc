/**
 * One writer per path and cluster: a `coordination.k8s.io/v1` Lease in the inventory's namespace,
 * named from the instance and the path, held by the reconciler that applies and renewed every
 * cycle. Another reconciler does not apply while the Lease is fresh and takes it over once it has
 * expired (judged by its renewTime, so the nodes' clocks must roughly agree) or was released.
 */
import { createHash } from "node:crypto";
import type { ClusterPort, LeaseRecord } from "./ports.js";

export interface LeaseSettings {
  /** This process's identity, written as `holderIdentity`. */
  holder: string;
  /** How long the Lease stays ours without a renewal (whole seconds on the wire). */
  durationMs: number;
}

export function pathLeaseName(instance: string, path: string): string {
  const hash = createHash("sha256").update(path).digest("hex").slice(0, 10);
  return `ferry-reconcile-${instance.toLowerCase().replace(/[^a-z0-9-]+/g, "-")}-${hash}`;
}

/** Who else holds the Lease at `now`, or undefined when it is free, expired or ours. */
export function otherHolder(lease: LeaseRecord | undefined, self: string, now: number): string | undefined {
  if (!lease || lease.holder === "" || lease.holder === self) return undefined;
  return lease.renewTime + lease.durationSeconds * 1000 > now ? lease.holder : undefined;
}

export type LeaseOutcome = { held: true; record: LeaseRecord } | { held: false; holder: string };

/** Takes or renews the Lease; `held: false` names the reconciler that holds it. */
export async function acquirePathLease(
  cluster: ClusterPort,
  namespace: string,
  name: string,
  settings: LeaseSettings,
  now: number,
): Promise<LeaseOutcome | undefined> {
  if (!cluster.readLease || !cluster.writeLease) return undefined;
  const current = await cluster.readLease(namespace, name);
  const holder = otherHolder(current, settings.holder, now);
  if (holder !== undefined) return { held: false, holder };
  const ours = current?.holder === settings.holder;
  try {
    const record = await cluster.writeLease({
      namespace,
      name,
      holder: settings.holder,
      renewTime: now,
      acquireTime: ours && current ? current.acquireTime : now,
      durationSeconds: Math.max(1, Math.ceil(settings.durationMs / 1000)),
      ...(current?.resourceVersion ? { resourceVersion: current.resourceVersion } : {}),
    });
    return { held: true, record };
  } catch (error) {
    const code = (error as { code?: string }).code;
    // The namespace does not exist yet (this cycle creates it): nobody can hold a Lease in it.
    if (code === "kubernetes-not-found" && !current) return undefined;
    // Someone wrote it between our read and our write: they hold it now.
    if (code !== "lease-conflict") throw error;
    const winner = await cluster.readLease(namespace, name);
    return { held: false, holder: winner?.holder || "(unknown)" };
  }
}

/** Gives the Lease up (empty holder, as client-go's ReleaseOnCancel), so another reconciler may take it at once. */
export async function releasePathLease(
  cluster: ClusterPort,
  record: LeaseRecord,
  now: number,
): Promise<void> {
  if (!cluster.writeLease) return;
  try {
    await cluster.writeLease({ ...record, holder: "", renewTime: now, durationSeconds: 1 });
  } catch {
    // Taken already, or unreachable: it expires by itself.
  }
}
