/**
 * Rendered objects → the desired state Ferry applies: namespace defaulted, ownership labels added,
 * duplicates refused, sorted into apply order. Pure.
 */
import { UserError } from "../core/errors.js";
import { compareRefs, describeRef, inventoryKey, refOf } from "./object-ref.js";
import type { RenderedObject } from "./parse-manifests.js";
import type { KubeObject, ObjectRef } from "./types.js";

export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const INSTANCE_LABEL = "ferry.dev/instance";
export const PRUNE_ANNOTATION = "ferry.dev/prune";
export const FIELD_MANAGER = "ferry";

/** Whether objects of a kind live in a namespace; `undefined` when the cluster does not know the kind yet. */
export type ScopeLookup = (apiVersion: string, kind: string) => boolean | undefined;

export interface DesiredObject {
  ref: ObjectRef;
  object: KubeObject;
  source: string;
  /** A Secret made of SOPS-decrypted values only (RenderedObject.decrypted). */
  decrypted?: true;
}

export interface DesiredStateOptions {
  instance: string;
  /** Applied to namespaced objects that name none (kubectl's `--namespace`). */
  defaultNamespace: string;
  /** Also create the default namespace (`--create-namespace`). */
  createNamespace?: boolean;
}

/** Kinds whose scope is known without asking the API server (the common cluster-scoped ones). */
const CLUSTER_SCOPED = new Set([
  "/Namespace",
  "/Node",
  "/PersistentVolume",
  "apiextensions.k8s.io/CustomResourceDefinition",
  "rbac.authorization.k8s.io/ClusterRole",
  "rbac.authorization.k8s.io/ClusterRoleBinding",
  "storage.k8s.io/StorageClass",
  "scheduling.k8s.io/PriorityClass",
  "admissionregistration.k8s.io/MutatingWebhookConfiguration",
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
]);

function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf("/");
  return slash === -1 ? "" : apiVersion.slice(0, slash);
}

/**
 * Decides scope: the cluster's discovery first, then CRDs rendered alongside (their `spec.scope`),
 * then the built-in list; a kind nobody knows is treated as namespaced, as kubectl does.
 */
export function scopeResolver(objects: KubeObject[], lookup: ScopeLookup): (object: KubeObject) => boolean {
  const crdScopes = new Map<string, boolean>();
  for (const object of objects) {
    if (object.kind !== "CustomResourceDefinition") continue;
    const spec = (object.spec ?? {}) as { group?: unknown; names?: { kind?: unknown }; scope?: unknown };
    if (typeof spec.group === "string" && typeof spec.names?.kind === "string") {
      crdScopes.set(`${spec.group}/${spec.names.kind}`, spec.scope !== "Cluster");
    }
  }
  return (object) => {
    const known = lookup(object.apiVersion, object.kind);
    if (known !== undefined) return known;
    const key = `${groupOf(object.apiVersion)}/${object.kind}`;
    return crdScopes.get(key) ?? !CLUSTER_SCOPED.has(key);
  };
}

/** The `source` of the Namespace `--create-namespace` adds: not something the config repo rendered. */
export const CREATE_NAMESPACE_SOURCE = "--create-namespace";

export function prepareDesiredState(
  rendered: RenderedObject[],
  isNamespaced: (object: KubeObject) => boolean,
  options: DesiredStateOptions,
): DesiredObject[] {
  const byKey = new Map<string, DesiredObject>();
  const add = (object: KubeObject, source: string, decrypted?: true) => {
    const prepared = withOwnership(object, options.instance);
    if (isNamespaced(prepared)) {
      prepared.metadata.namespace ??= options.defaultNamespace;
    } else {
      delete prepared.metadata.namespace;
    }
    const ref = refOf(prepared);
    const key = inventoryKey(ref);
    const earlier = byKey.get(key);
    if (earlier) {
      throw new UserError(
        "duplicate-object",
        `${describeRef(ref)} is defined twice: in ${earlier.source} and in ${source}`,
      );
    }
    byKey.set(key, { ref, object: prepared, source, ...(decrypted ? { decrypted } : {}) });
  };
  for (const { object, source, decrypted } of rendered) add(object, source, decrypted);
  if (options.createNamespace) {
    const key = inventoryKey({
      group: "",
      version: "v1",
      kind: "Namespace",
      namespace: "",
      name: options.defaultNamespace,
    });
    if (!byKey.has(key)) {
      add(
        { apiVersion: "v1", kind: "Namespace", metadata: { name: options.defaultNamespace } },
        CREATE_NAMESPACE_SOURCE,
      );
    }
  }
  return [...byKey.values()].sort((a, b) => compareRefs(a.ref, b.ref));
}

/** A copy of the object carrying Ferry's labels; the user's own labels stay. */
function withOwnership(object: KubeObject, instance: string): KubeObject {
  const copy = structuredClone(object);
  copy.metadata.labels = { ...copy.metadata.labels, [MANAGED_BY_LABEL]: "ferry", [INSTANCE_LABEL]: instance };
  return copy;
}
