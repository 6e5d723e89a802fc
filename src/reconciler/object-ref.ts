/**
 * Object identity and the inventory key format `<group>_<kind>_<namespace>_<name>` (after Flux's
 * `.status.inventory`; the version is left out so an apiVersion bump is not a delete + create).
 */
import type { KubeObject, ObjectRef } from "./types.js";

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf("/");
  return slash === -1
    ? { group: "", version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

export function refOf(object: KubeObject): ObjectRef {
  const { group, version } = splitApiVersion(object.apiVersion);
  return {
    group,
    version,
    kind: object.kind,
    namespace: object.metadata.namespace ?? "",
    name: object.metadata.name,
  };
}

export function apiVersionOf(ref: ObjectRef): string {
  return ref.group === "" ? ref.version : `${ref.group}/${ref.version}`;
}

/** `apps_Deployment_shop_web`; core group objects start with an empty group: `_Service_shop_web`. */
export function inventoryKey(ref: ObjectRef): string {
  return `${ref.group}_${ref.kind}_${ref.namespace}_${ref.name}`;
}

/** An inventory entry: the key, then `|` and the version, so a prune can address the object (the key stays version-free). */
export function formatInventoryEntry(ref: ObjectRef): string {
  return `${inventoryKey(ref)}|${ref.version}`;
}

/** Parses an inventory entry; `undefined` for anything malformed (a hand-edited ConfigMap must not crash a prune). */
export function parseInventoryEntry(entry: string): ObjectRef | undefined {
  const [key, version] = entry.split("|");
  if (key === undefined || !version) return undefined;
  const parts = key.split("_");
  // Names, namespaces and kinds never contain "_" (DNS-1123 / Go identifiers); groups are DNS names.
  if (parts.length !== 4) return undefined;
  const [group, kind, namespace, name] = parts as [string, string, string, string];
  if (!kind || !name) return undefined;
  return { group, version, kind, namespace, name };
}

export function describeRef(ref: ObjectRef): string {
  const kind = ref.group === "" ? ref.kind : `${ref.kind}.${ref.group}`;
  return ref.namespace ? `${kind} ${ref.namespace}/${ref.name}` : `${kind} ${ref.name}`;
}

/**
 * Apply order: Namespaces, then CRDs, then cluster-scoped objects, then the rest — each group sorted
 * by kind, namespace and name, so the order is the same whatever order the files came in.
 */
export function applyRank(ref: ObjectRef): number {
  if (ref.group === "" && ref.kind === "Namespace") return 0;
  if (ref.group === "apiextensions.k8s.io" && ref.kind === "CustomResourceDefinition") return 1;
  if (ref.namespace === "") return 2;
  return 3;
}

export function compareRefs(a: ObjectRef, b: ObjectRef): number {
  return (
    applyRank(a) - applyRank(b) ||
    a.group.localeCompare(b.group) ||
    a.kind.localeCompare(b.kind) ||
    a.namespace.localeCompare(b.namespace) ||
    a.name.localeCompare(b.name)
  );
}
