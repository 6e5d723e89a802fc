/**
 * The apply step: carries out a plan's applies with server-side apply, rank by rank (Namespaces,
 * CRDs, cluster-scoped, the rest), in parallel within a rank. An error for one object is recorded
 * and the others still go ahead; the caller then skips the prune.
 */
import { isTransientError, UserError } from "../core/errors.js";
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
  crdServedTimeoutMs = 30_000,
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
  return outcome;
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
