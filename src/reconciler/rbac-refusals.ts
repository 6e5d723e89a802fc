/**
 * Objects the reconciler's RBAC does not let it read or write (docs/reliability.md, "refused
 * kind"): a 403 on one kind refuses that kind's objects, as the confinement refuses objects
 * outside it, so the kinds that are allowed still sync. A 401 (credentials not accepted) is no
 * refusal: it fails the cycle.
 */
import type { RefusedObject } from "./confinement.js";
import { inventoryKey } from "./object-ref.js";
import type { ObjectRef } from "./types.js";

export function isForbidden(error: unknown): boolean {
  return (error as { code?: string } | undefined)?.code === "kubernetes-forbidden";
}

export function forbiddenReason(error: unknown): string {
  return `forbidden by the reconciler's RBAC (${(error as Error).message}); add the kind to its Role (ferry reconcile --print-rbac)`;
}

/** The refusals by inventory key, collected while observing. */
export class RbacRefusals {
  private readonly reasons = new Map<string, string>();

  add(ref: ObjectRef, error: unknown): void {
    this.reasons.set(inventoryKey(ref), forbiddenReason(error));
  }

  has(ref: ObjectRef): boolean {
    return this.reasons.has(inventoryKey(ref));
  }

  /** Desired objects split into those still observed and those refused. */
  split<T extends { ref: ObjectRef }>(desired: T[]): { kept: T[]; refused: RefusedObject[] } {
    const kept: T[] = [];
    const refused: RefusedObject[] = [];
    for (const item of desired) {
      const reason = this.reasons.get(inventoryKey(item.ref));
      if (reason) refused.push({ ref: item.ref, reason });
      else kept.push(item);
    }
    return { kept, refused };
  }

  reasonFor(ref: ObjectRef): string | undefined {
    return this.reasons.get(inventoryKey(ref));
  }
}
