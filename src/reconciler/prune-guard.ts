/**
 * What a prune really deletes (docs/reliability.md row 46): deleting a Namespace
 * makes the namespace controller delete everything in it, and deleting a CRD deletes all its custom
 * resources. Pure: the contents come in from `prune-contents.ts`; this decides which of them count
 * against the circuit breaker and which forbid the delete.
 */
import { describeRef, inventoryKey, refOf } from "./object-ref.js";
import type { NamespaceContents } from "./ports.js";
import type { KubeObject, ObjectRef } from "./types.js";

/** Objects a delete of this orphan would take with it, as looked up this cycle, by its inventory key. */
export type OrphanContents = Map<string, NamespaceContents>;

export function isNamespaceRef(ref: ObjectRef): boolean {
  return ref.group === "" && ref.kind === "Namespace";
}

export function isCrdRef(ref: ObjectRef): boolean {
  return ref.group === "apiextensions.k8s.io" && ref.kind === "CustomResourceDefinition";
}

/** Whether a delete of this kind takes other objects with it. */
export function deletesContents(ref: ObjectRef): boolean {
  return isNamespaceRef(ref) || isCrdRef(ref);
}

/**
 * Objects Kubernetes itself keeps in every namespace or derives from others: dependents (owner
 * references: they go with their owner, which is counted instead), events, the `default`
 * ServiceAccount, the `kube-root-ca.crt` ConfigMap, and the Endpoints of a Service.
 */
function isIncidental(object: KubeObject, services: Set<string>): boolean {
  const { kind, metadata } = object;
  if (kind === "Event") return true;
  if (Array.isArray(metadata.ownerReferences) && metadata.ownerReferences.length > 0) return true;
  const group = refOf(object).group;
  if (group !== "") return false;
  if (kind === "ServiceAccount" && metadata.name === "default") return true;
  if (kind === "ConfigMap" && metadata.name === "kube-root-ca.crt") return true;
  return kind === "Endpoints" && services.has(metadata.name);
}

/** The contents that matter: what a delete would remove beyond the orphan itself. */
export function significantContents(objects: KubeObject[]): KubeObject[] {
  const services = new Set(
    objects.filter((object) => object.kind === "Service").map((object) => object.metadata.name),
  );
  return objects.filter((object) => !isIncidental(object, services));
}

export interface ContentsVerdict {
  /** Contents deleted along with the orphan that are not themselves pruned this cycle (the budget counts them). */
  extra: ObjectRef[];
  /** Set when the orphan must not be deleted: a Namespace holding objects that are not pruned with it. */
  refusal?: string;
}

function listRefs(refs: ObjectRef[], limit = 3): string {
  const shown = refs.slice(0, limit).map(describeRef).join(", ");
  return refs.length > limit ? `${shown} and ${refs.length - limit} more` : shown;
}

/**
 * For one orphan that deletes contents: a Namespace is refused while it holds anything this very
 * prune does not delete (objects Ferry does not manage, objects still in Git, objects kept for a
 * veto); a CRD's custom resources count against the budget. `pruning` holds the inventory keys
 * of every prune candidate this cycle.
 */
export function judgeContents(
  ref: ObjectRef,
  contents: NamespaceContents,
  pruning: Set<string>,
): ContentsVerdict {
  const extra = significantContents(contents.objects)
    .map(refOf)
    .filter((inner) => !pruning.has(inventoryKey(inner)));
  if (isNamespaceRef(ref) && contents.unreadable.length > 0) {
    return {
      extra,
      refusal: `cannot tell what Namespace ${ref.name} holds: no permission to list ${contents.unreadable.join(", ")} there`,
    };
  }
  if (isNamespaceRef(ref) && extra.length > 0) {
    const count = extra.length === 1 ? "1 object" : `${extra.length} objects`;
    return {
      extra,
      refusal: `Namespace ${ref.name} still holds ${count} this prune would not delete (${listRefs(extra)}); deleting the Namespace would delete them too`,
    };
  }
  return { extra };
}

/**
 * Namespaces and CRDs among the prune candidates: a Namespace that holds objects this prune does
 * not delete is refused (it stays, and stays managed); a CRD's custom resources are counted
 * (`extra`: distinct objects deleted beyond the candidates).
 */
export function guardContents(
  candidates: ObjectRef[],
  contents: OrphanContents | undefined,
): { candidates: ObjectRef[]; refused: { ref: ObjectRef; detail: string }[]; extra: number } {
  const pruning = new Set(candidates.map(inventoryKey));
  const refused: { ref: ObjectRef; detail: string }[] = [];
  const extra = new Set<string>();
  const remaining: ObjectRef[] = [];
  for (const ref of candidates) {
    if (!deletesContents(ref)) {
      remaining.push(ref);
      continue;
    }
    const inside = contents?.get(inventoryKey(ref));
    if (!inside) throw new Error(`bug: no contents looked up for ${describeRef(ref)}`);
    const verdict = judgeContents(ref, inside, pruning);
    if (verdict.refusal) {
      refused.push({ ref, detail: verdict.refusal });
      continue;
    }
    remaining.push(ref);
    for (const inner of verdict.extra) extra.add(inventoryKey(inner));
  }
  return { candidates: remaining, refused, extra: extra.size };
}
