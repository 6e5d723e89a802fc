/**
 * What a cycle remembers for the next one: per object, the desired object last found in sync and
 * the live resourceVersion it was in sync at.
 */
import { inventoryKey } from "./object-ref.js";
import type { Observation } from "./observe.js";
import type { SyncPlan } from "./plan.js";
import type { KubeObject } from "./types.js";

/**
 * Server-side apply is deterministic, so while neither the desired object nor the live
 * resourceVersion changes a dry-run would only repeat itself: a no-op cycle then costs a few LISTs
 * instead of one dry-run per object. Any change to the live object (a hand edit, a controller's
 * status update) bumps its resourceVersion and brings the dry-run back.
 */
export class DiffMemory {
  private readonly inSync = new Map<string, { fingerprint: string; resourceVersion: string }>();

  static fingerprint(object: KubeObject): string {
    return JSON.stringify(object);
  }

  isKnownInSync(key: string, desired: KubeObject, live: KubeObject): boolean {
    const entry = this.inSync.get(key);
    const version = live.metadata.resourceVersion;
    return (
      entry !== undefined &&
      typeof version === "string" &&
      entry.resourceVersion === version &&
      entry.fingerprint === DiffMemory.fingerprint(desired)
    );
  }

  /** The object was last in sync with exactly this desired object: a live change since is drift, not Git's. */
  wasInSyncWith(key: string, desired: KubeObject): boolean {
    return this.inSync.get(key)?.fingerprint === DiffMemory.fingerprint(desired);
  }

  remember(key: string, desired: KubeObject, live: KubeObject | undefined): void {
    const version = live?.metadata.resourceVersion;
    if (typeof version === "string")
      this.inSync.set(key, { fingerprint: DiffMemory.fingerprint(desired), resourceVersion: version });
    else this.inSync.delete(key);
  }

  forget(key: string): void {
    this.inSync.delete(key);
  }

  /** Drops entries for objects no longer desired, so memory stays bounded by the desired set. */
  retainOnly(keys: Set<string>): void {
    for (const key of this.inSync.keys()) if (!keys.has(key)) this.inSync.delete(key);
  }
}

/** After a cycle: objects applied or found unchanged are in sync at their live resourceVersion. */
export function rememberInSync(
  memory: DiffMemory,
  plan: SyncPlan,
  observation: Observation,
  liveAfter: Map<string, KubeObject>,
): void {
  const unchanged = new Set(plan.unchanged.map(inventoryKey));
  for (const { ref, object } of observation.desired) {
    const key = inventoryKey(ref);
    const applied = liveAfter.get(key);
    if (applied) memory.remember(key, object, applied);
    else if (unchanged.has(key)) memory.remember(key, object, observation.observed.get(key)?.live);
    else memory.forget(key);
  }
  memory.retainOnly(new Set(observation.desired.map(({ ref }) => inventoryKey(ref))));
}
