/**
 * Changes a reviewer must not miss, each one a reason for the `ferry/diff` check to fail: objects
 * pruned, an environment that renders to nothing, a Namespace, CRD or PVC deleted (with everything
 * that lives in it), and a field the API server refuses to change (the apply fails, or needs a
 * delete and re-create). The immutable fields are in one table, IMMUTABLE_FIELDS, from the
 * Kubernetes API validation of each kind. docs/diff.md "Dangers". Pure.
 */
import type { KubeObject } from "../kube-object.js";
import { canonicalJson } from "./normalize.js";
import type { Danger, ObjectKey } from "./types.js";

export interface ImmutableField {
  group: string;
  kind: string;
  /** Dotted path from the object's root. */
  path: string;
  /** Only a change between two set values counts (the API server fills the field in when it is unset). */
  whenSetOnBoth?: boolean;
  why: string;
}

export const IMMUTABLE_FIELDS: readonly ImmutableField[] = [
  { group: "apps", kind: "Deployment", path: "spec.selector", why: "a Deployment's selector is immutable" },
  { group: "apps", kind: "ReplicaSet", path: "spec.selector", why: "a ReplicaSet's selector is immutable" },
  { group: "apps", kind: "DaemonSet", path: "spec.selector", why: "a DaemonSet's selector is immutable" },
  { group: "apps", kind: "StatefulSet", path: "spec.selector", why: "a StatefulSet's selector is immutable" },
  {
    group: "apps",
    kind: "StatefulSet",
    path: "spec.volumeClaimTemplates",
    why: "a StatefulSet's volumeClaimTemplates cannot be changed",
  },
  {
    group: "apps",
    kind: "StatefulSet",
    path: "spec.serviceName",
    why: "a StatefulSet's serviceName cannot be changed",
  },
  {
    group: "apps",
    kind: "StatefulSet",
    path: "spec.podManagementPolicy",
    why: "a StatefulSet's podManagementPolicy cannot be changed",
  },
  { group: "batch", kind: "Job", path: "spec.selector", why: "a Job's selector is immutable" },
  { group: "batch", kind: "Job", path: "spec.template", why: "a Job's Pod template is immutable" },
  { group: "batch", kind: "Job", path: "spec.completionMode", why: "a Job's completionMode is immutable" },
  {
    group: "",
    kind: "Service",
    path: "spec.clusterIP",
    whenSetOnBoth: true,
    why: "a Service's clusterIP cannot be changed",
  },
  {
    group: "",
    kind: "Service",
    path: "spec.clusterIPs",
    whenSetOnBoth: true,
    why: "a Service's clusterIPs cannot be changed",
  },
  {
    group: "",
    kind: "PersistentVolumeClaim",
    path: "spec.storageClassName",
    whenSetOnBoth: true,
    why: "a PersistentVolumeClaim's storageClassName is immutable",
  },
  {
    group: "",
    kind: "PersistentVolumeClaim",
    path: "spec.accessModes",
    why: "a PersistentVolumeClaim's accessModes are immutable",
  },
  {
    group: "",
    kind: "PersistentVolumeClaim",
    path: "spec.volumeMode",
    whenSetOnBoth: true,
    why: "a PersistentVolumeClaim's volumeMode is immutable",
  },
  {
    group: "",
    kind: "PersistentVolumeClaim",
    path: "spec.volumeName",
    whenSetOnBoth: true,
    why: "a bound PersistentVolumeClaim's volumeName is immutable",
  },
  {
    group: "rbac.authorization.k8s.io",
    kind: "RoleBinding",
    path: "roleRef",
    why: "a RoleBinding's roleRef is immutable",
  },
  {
    group: "rbac.authorization.k8s.io",
    kind: "ClusterRoleBinding",
    path: "roleRef",
    why: "a ClusterRoleBinding's roleRef is immutable",
  },
  {
    group: "storage.k8s.io",
    kind: "StorageClass",
    path: "provisioner",
    why: "a StorageClass's provisioner is immutable",
  },
  {
    group: "storage.k8s.io",
    kind: "StorageClass",
    path: "parameters",
    why: "a StorageClass's parameters are immutable",
  },
  {
    group: "storage.k8s.io",
    kind: "StorageClass",
    path: "reclaimPolicy",
    why: "a StorageClass's reclaimPolicy is immutable",
  },
  {
    group: "storage.k8s.io",
    kind: "StorageClass",
    path: "volumeBindingMode",
    why: "a StorageClass's volumeBindingMode is immutable",
  },
];

/** Kinds whose deletion takes more with it, and the reason. */
const DELETIONS: Record<string, { reason: Danger["reason"]; what: string }> = {
  "/Namespace": { reason: "deletes-namespace", what: "deletes the Namespace and every object in it" },
  "apiextensions.k8s.io/CustomResourceDefinition": {
    reason: "deletes-crd",
    what: "deletes the CustomResourceDefinition and every custom resource of its kind",
  },
  "/PersistentVolumeClaim": {
    reason: "deletes-pvc",
    what: "deletes the PersistentVolumeClaim (its volume's data goes with it unless the reclaim policy keeps it)",
  },
};

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf("/");
  return slash === -1 ? "" : apiVersion.slice(0, slash);
}

/** `Deployment.apps shop/web`, `Namespace shop`: how every message names an object. */
export function describeKey(key: ObjectKey): string {
  const group = groupOf(key.apiVersion);
  const kind = group === "" ? key.kind : `${key.kind}.${group}`;
  return key.namespace ? `${kind} ${key.namespace}/${key.name}` : `${kind} ${key.name}`;
}

function valueAt(object: unknown, path: string): unknown {
  let current = object;
  for (const step of path.split(".")) {
    if (typeof current !== "object" || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[step];
  }
  return current;
}

/** The dangers of removing `object`: a prune, and what its kind takes with it. */
export function removalDangers(key: ObjectKey): Danger[] {
  const dangers: Danger[] = [{ reason: "prune", object: key, detail: `${describeKey(key)} would be pruned` }];
  const deletion = DELETIONS[`${groupOf(key.apiVersion)}/${key.kind}`];
  if (deletion)
    dangers.push({ reason: deletion.reason, object: key, detail: `${describeKey(key)}: ${deletion.what}` });
  return dangers;
}

/** The immutable fields `head` changes from `base` (both normalized), and an `immutable: true` ConfigMap/Secret's data. */
export function immutableFieldDangers(base: KubeObject, head: KubeObject, key: ObjectKey): Danger[] {
  const group = groupOf(head.apiVersion);
  const dangers: Danger[] = [];
  for (const field of IMMUTABLE_FIELDS) {
    if (field.group !== group || field.kind !== head.kind) continue;
    const before = valueAt(base, field.path);
    const after = valueAt(head, field.path);
    if (field.whenSetOnBoth && (before === undefined || after === undefined)) continue;
    if (canonicalJson(before) === canonicalJson(after)) continue;
    dangers.push({
      reason: "immutable-field",
      object: key,
      detail: `${describeKey(key)}: ${field.path} changes, but ${field.why} (the apply would fail; delete and re-create the object instead)`,
    });
  }
  if (group === "" && (head.kind === "ConfigMap" || head.kind === "Secret") && base.immutable === true) {
    const payload = (object: KubeObject) =>
      canonicalJson([object.data, object.binaryData, object.stringData, object.immutable]);
    if (payload(base) !== payload(head))
      dangers.push({
        reason: "immutable-field",
        object: key,
        detail: `${describeKey(key)}: its data changes, but it is marked immutable: true (the apply would fail)`,
      });
  }
  return dangers;
}
