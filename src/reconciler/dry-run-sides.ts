/**
 * The two sides of `ferry reconcile --dry-run --diff`, from a dry-run cycle's observation and plan:
 * the live objects, and what the API server would store once the plan is applied (its server-side
 * dry-run answers; a desired object that does not exist yet as rendered; an object the plan
 * prunes, absent). Compared by the diff core like two renders (docs/diff.md "Live against desired").
 */
import { inventoryKey } from "./object-ref.js";
import type { Observation } from "./observe.js";
import type { SyncPlan } from "./plan.js";
import type { KubeObject } from "./types.js";

export interface DryRunSides {
  live: KubeObject[];
  desired: KubeObject[];
}

export function dryRunSides(
  plan: SyncPlan,
  observation: Pick<Observation, "desired" | "observed" | "orphansLive">,
): DryRunSides {
  const live: KubeObject[] = [];
  const desired: KubeObject[] = [];
  for (const { ref, object } of observation.desired) {
    const seen = observation.observed.get(inventoryKey(ref));
    if (seen?.live) live.push(seen.live);
    desired.push(seen?.live && seen.dryRun ? seen.dryRun : object);
  }
  for (const ref of plan.prune) {
    const object = observation.orphansLive.get(inventoryKey(ref));
    if (object) live.push(object);
  }
  return { live, desired };
}
