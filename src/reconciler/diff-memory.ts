/**
 * What a cycle remembers for the next one: per object, the desired object last found in sync and
 * the live version it was in sync at. It is kept in the process and in the inventory (with the
 * identity of the API server it was gathered on), so a restarted reconciler skips the dry-runs too.
 * A Secret's entry is the exception (docs/security.md, "SOPS"): its fingerprint is an HMAC under a
 * key this process made and never stores, and it is never written to the inventory, so nothing
 * stored can be used to test a guess of a Secret's values.
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { inventoryKey } from "./object-ref.js";
import type { DesiredObject } from "./desired-state.js";
import type { ObservedObject, SyncPlan } from "./plan.js";
import type { KubeObject } from "./types.js";

function digest(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 24);
}

/** This process's key for Secrets' fingerprints: never stored, so a restart forgets them. */
const SECRET_FINGERPRINT_KEY = randomBytes(32);

function isSecret(object: KubeObject): boolean {
  return object.kind === "Secret" && object.apiVersion === "v1";
}

/** A core Secret's inventory key (`<group>_<kind>_…`, object-ref.ts). */
function isSecretKey(key: string): boolean {
  return key.startsWith("_Secret_");
}

/**
 * What moves whenever anyone but a status writer changes the object: its generation (every spec
 * change) with its managedFields (every other write, by whom and when), or, for kinds without a
 * generation, its resourceVersion. Status updates by controllers do not count: they never change
 * what Ferry applies. undefined when the server sent neither.
 */
export function liveVersion(live: KubeObject): string | undefined {
  const { generation, managedFields, resourceVersion } = live.metadata as {
    generation?: unknown;
    managedFields?: { subresource?: string }[];
    resourceVersion?: unknown;
  };
  if (typeof generation === "number") {
    const entries = (Array.isArray(managedFields) ? managedFields : []).filter(
      (entry) => entry?.subresource !== "status",
    );
    return `g${generation}/${digest(JSON.stringify(entries))}`;
  }
  return typeof resourceVersion === "string" ? `rv${resourceVersion}` : undefined;
}

/**
 * Server-side apply is deterministic, so while neither the desired object nor the live version
 * changes a dry-run would only repeat itself: a no-op cycle then costs a few LISTs instead of one
 * dry-run per object. Any change to the live object (a hand edit, another manager's write) moves
 * its version and brings the dry-run back.
 */
export class DiffMemory {
  private readonly inSync = new Map<string, { fingerprint: string; version: string }>();

  static fingerprint(object: KubeObject): string {
    if (isSecret(object))
      return createHmac("sha256", SECRET_FINGERPRINT_KEY)
        .update(JSON.stringify(object))
        .digest("hex")
        .slice(0, 24);
    return digest(JSON.stringify(object));
  }

  isKnownInSync(key: string, desired: KubeObject, live: KubeObject): boolean {
    const entry = this.inSync.get(key);
    const version = liveVersion(live);
    return (
      entry !== undefined &&
      version !== undefined &&
      entry.version === version &&
      entry.fingerprint === DiffMemory.fingerprint(desired)
    );
  }

  /** The object was last in sync with exactly this desired object: a live change since is drift, not Git's. */
  wasInSyncWith(key: string, desired: KubeObject): boolean {
    return this.inSync.get(key)?.fingerprint === DiffMemory.fingerprint(desired);
  }

  remember(key: string, desired: KubeObject, live: KubeObject | undefined): void {
    const version = live && liveVersion(live);
    if (version !== undefined)
      this.inSync.set(key, { fingerprint: DiffMemory.fingerprint(desired), version });
    else this.inSync.delete(key);
  }

  forget(key: string): void {
    this.inSync.delete(key);
  }

  clear(): void {
    this.inSync.clear();
  }

  /** Drops entries for objects no longer desired, so memory stays bounded by the desired set. */
  retainOnly(keys: Set<string>): void {
    for (const key of this.inSync.keys()) if (!keys.has(key)) this.inSync.delete(key);
  }

  /** As stored in the inventory: key → [live version, desired fingerprint]; Secrets are left out. */
  export(): Record<string, [string, string]> {
    const out: Record<string, [string, string]> = {};
    for (const [key, { version, fingerprint }] of this.inSync)
      if (!isSecretKey(key)) out[key] = [version, fingerprint];
    return out;
  }

  /** Takes the stored entries for keys this process has no memory of. */
  adopt(stored: Record<string, [string, string]>): void {
    for (const [key, [version, fingerprint]] of Object.entries(stored))
      if (!this.inSync.has(key) && !isSecretKey(key)) this.inSync.set(key, { version, fingerprint });
  }
}

/** After a cycle: objects applied or found unchanged are in sync at their live version. */
export function rememberInSync(
  memory: DiffMemory,
  plan: SyncPlan,
  /** What the cycle observed: the desired objects and their live state before it applied. */
  observation: { desired: DesiredObject[]; observed: Map<string, ObservedObject> },
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
