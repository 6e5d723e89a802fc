/**
 * The gate between sync waves: a wave starts only when every desired object of the earlier waves
 * is Healthy (or Suspended), as Argo CD waits (docs/architecture.md "Sync waves and opt-outs"). Pure.
 */
import type { WaveGate } from "./apply.js";
import type { DesiredObject } from "./desired-state.js";
import { assessHealth, groupKind } from "./health.js";
import { apiVersionOf, describeRef, inventoryKey } from "./object-ref.js";
import type { ObservedObject } from "./plan.js";
import { waveOrZero } from "./sync-options.js";
import type { StatusReporting } from "./types.js";

export function waveGate(
  desired: DesiredObject[],
  observed: Map<string, ObservedObject>,
  statusKinds: Map<string, StatusReporting | undefined>,
  /** Asks again for a kind with no answer yet (a CRD this very cycle created). */
  ask?: (apiVersion: string, kind: string) => Promise<StatusReporting | undefined>,
): WaveGate {
  // Answers gathered before the apply may predate a CRD created by it: each kind is asked once more.
  const asked = new Set<string>();
  return async (wave, liveAfter) => {
    for (const { ref, object } of desired) {
      const itsWave = waveOrZero(object);
      if (itsWave >= wave) continue;
      const kindKey = groupKind(apiVersionOf(ref), ref.kind);
      if (ask && !asked.has(kindKey) && statusKinds.get(kindKey) !== "reports") {
        asked.add(kindKey);
        statusKinds.set(kindKey, await ask(apiVersionOf(ref), ref.kind).catch(() => undefined));
      }
      const key = inventoryKey(ref);
      const live = liveAfter.get(key) ?? observed.get(key)?.live;
      const health = assessHealth(live, (kind) => statusKinds.get(kind));
      if (health.status === "Healthy" || health.status === "Suspended") continue;
      const why = health.message ? `: ${health.message.slice(0, 120)}` : "";
      return `${describeRef(ref)} (wave ${itsWave}) is ${health.status}${why}`;
    }
    return undefined;
  };
}
