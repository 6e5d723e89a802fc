/**
 * Looks up what deleting an orphan Namespace or CRD would take with it (`prune-guard.ts` judges
 * it): everything in the namespace, or every custom resource of the CRD's kind. Reads only, and
 * only when pruning is on and such an orphan is still there.
 */
import type { Observation } from "./observe.js";
import { inventoryKey } from "./object-ref.js";
import type { ClusterPort } from "./ports.js";
import { isCrdRef, isNamespaceRef, type OrphanContents } from "./prune-guard.js";
import type { KubeObject } from "./types.js";

async function customResources(cluster: ClusterPort, crd: KubeObject): Promise<KubeObject[]> {
  const spec = (crd.spec ?? {}) as {
    group?: string;
    names?: { kind?: string };
    versions?: { name?: string; served?: boolean; storage?: boolean }[];
  };
  const version =
    spec.versions?.find((candidate) => candidate.storage && candidate.served !== false) ??
    spec.versions?.find((candidate) => candidate.served !== false);
  if (!spec.group || !spec.names?.kind || !version?.name) return [];
  const apiVersion = `${spec.group}/${version.name}`;
  // A kind no longer served has no custom resources left to lose.
  if ((await cluster.isNamespaced(apiVersion, spec.names.kind)) === undefined) return [];
  return cluster.list(apiVersion, spec.names.kind, undefined, "");
}

export async function lookUpOrphanContents(
  cluster: ClusterPort,
  observation: Pick<Observation, "inventory" | "orphansLive">,
): Promise<OrphanContents> {
  const contents: OrphanContents = new Map();
  for (const ref of observation.inventory) {
    const key = inventoryKey(ref);
    const live = observation.orphansLive.get(key);
    if (!live) continue;
    if (isNamespaceRef(ref)) contents.set(key, await cluster.namespaceContents(ref.name));
    else if (isCrdRef(ref))
      contents.set(key, { objects: await customResources(cluster, live), unreadable: [] });
  }
  return contents;
}
