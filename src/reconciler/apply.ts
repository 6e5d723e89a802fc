/**
 * The apply step: carries out a plan's applies with server-side apply, rank by rank (Namespaces,
 * CRDs, cluster-scoped, the rest), in parallel within a rank. An error for one object is recorded
 * and the others still go ahead; the caller then skips the prune.
 */
import { isTransientError } from "../core/errors.js";
import { forEachLimited } from "./for-each-limited.js";
import { applyRank, inventoryKey } from "./object-ref.js";
import type { SyncPlan } from "./plan.js";
import type { ClusterPort } from "./ports.js";
import type { KubeObject, ObjectRef } from "./types.js";

export interface ApplyOutcome {
  applied: ObjectRef[];
  /** What the API server returned for each applied object, by inventory key. */
  liveAfter: Map<string, KubeObject>;
  /** `apply: …` lines, one per failed object. */
  errors: string[];
  writes: number;
  transient: boolean;
}

export async function applyPlan(
  cluster: ClusterPort,
  plan: SyncPlan,
  concurrency: number,
): Promise<ApplyOutcome> {
  const outcome: ApplyOutcome = {
    applied: [],
    liveAfter: new Map(),
    errors: [],
    writes: 0,
    transient: false,
  };
  const ranks = [...new Set(plan.apply.map((item) => applyRank(item.ref)))];
  for (const rank of ranks) {
    const batch = plan.apply.filter((item) => applyRank(item.ref) === rank);
    await forEachLimited(batch, concurrency, async (item) => {
      outcome.writes++;
      try {
        outcome.liveAfter.set(inventoryKey(item.ref), await cluster.apply(item.object, { dryRun: false }));
        outcome.applied.push(item.ref);
      } catch (error) {
        outcome.transient ||= isTransientError(error);
        outcome.errors.push(`apply: ${(error as Error).message}`);
      }
    });
  }
  return outcome;
}
