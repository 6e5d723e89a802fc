/**
 * The apply step: carries out a plan's applies with server-side apply, sync wave by sync wave and
 * inside a wave rank by rank (Namespaces, CRDs, cluster-scoped, the rest), in parallel within a
 * rank. An error for one object is recorded and the others of its wave still go ahead; the caller
 * then skips the prune. A wave starts only once the gate passes (the earlier waves healthy): when it
 * does not, the rest waits for a later cycle (docs/architecture.md "Sync waves and opt-outs").
 */
import { isTransientError, UserError } from "../core/errors.js";
import { forEachLimited } from "./for-each-limited.js";
import { applyRank, inventoryKey } from "./object-ref.js";
import { waveOrZero } from "./sync-options.js";
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
  /** Set when a wave was not started: why, and the objects left for a later cycle. */
  waiting?: { reason: string; deferred: ObjectRef[] };
}

/** Before wave `wave` starts: why it must wait (an earlier wave not healthy yet), or undefined. */
export type WaveGate = (wave: number, liveAfter: Map<string, KubeObject>) => Promise<string | undefined>;

export async function applyPlan(
  cluster: ClusterPort,
  plan: SyncPlan,
  concurrency: number,
  crdServedTimeoutMs = 30_000,
  gate: WaveGate = () => Promise.resolve(undefined),
): Promise<ApplyOutcome> {
  const outcome: ApplyOutcome = {
    applied: [],
    liveAfter: new Map(),
    errors: [],
    writes: 0,
    transient: false,
  };
  const waves = [...new Set(plan.apply.map((item) => waveOrZero(item.object)))].sort((a, b) => a - b);
  for (const wave of waves) {
    const reason =
      outcome.errors.length > 0 ? "an earlier wave failed to apply" : await gate(wave, outcome.liveAfter);
    if (reason !== undefined) {
      const deferred = plan.apply.filter((item) => waveOrZero(item.object) >= wave).map((item) => item.ref);
      outcome.waiting = { reason: `wave ${wave} waits: ${reason}`, deferred };
      break;
    }
    await applyWave(
      cluster,
      plan.apply.filter((item) => waveOrZero(item.object) === wave),
      outcome,
      concurrency,
      crdServedTimeoutMs,
    );
  }
  return outcome;
}

async function applyWave(
  cluster: ClusterPort,
  items: SyncPlan["apply"],
  outcome: ApplyOutcome,
  concurrency: number,
  crdServedTimeoutMs: number,
): Promise<void> {
  const ranks = [...new Set(items.map((item) => applyRank(item.ref)))].sort((a, b) => a - b);
  for (const rank of ranks) {
    const batch = items.filter((item) => applyRank(item.ref) === rank);
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
    // A CRD's kind is served a moment after the CRD is created: until then kube-apiserver answers
    // its custom resources with 404 (kubectl waits for condition=established; Flux's
    // ssa.ResourceManager.ApplyAllStaged waits for CRDs before applying the rest).
    const crds = batch.filter(
      (item) => item.ref.group === "apiextensions.k8s.io" && item.ref.kind === "CustomResourceDefinition",
    );
    for (const item of crds) {
      if (!outcome.applied.some((ref) => inventoryKey(ref) === inventoryKey(item.ref))) continue;
      try {
        await waitUntilServed(cluster, item.object, crdServedTimeoutMs);
      } catch (error) {
        outcome.transient ||= isTransientError(error);
        outcome.errors.push(`apply: ${(error as Error).message}`);
      }
    }
  }
}

/** Resolves once every served version of the CRD's kind is in discovery; throws after `timeoutMs`. */
async function waitUntilServed(cluster: ClusterPort, crd: KubeObject, timeoutMs: number): Promise<void> {
  const spec = (crd.spec ?? {}) as {
    group?: string;
    names?: { kind?: string };
    versions?: { name?: string; served?: boolean }[];
  };
  const kind = spec.names?.kind;
  const versions = (spec.versions ?? []).filter((version) => version.served !== false && version.name);
  if (!spec.group || !kind) return;
  const deadline = Date.now() + timeoutMs;
  for (const { name } of versions) {
    while ((await cluster.isNamespaced(`${spec.group}/${name}`, kind)) === undefined) {
      if (Date.now() > deadline) {
        throw new UserError(
          "crd-not-served",
          `CustomResourceDefinition ${crd.metadata.name} is applied but ${kind} ${spec.group}/${name} is not served after ${Math.round(timeoutMs / 1000)} s`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
