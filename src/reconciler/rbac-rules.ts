/**
 * The RBAC a render needs (`ferry reconcile --print-rbac`): for each kind the path renders, the
 * resource and the verbs observing, applying and pruning it take, as one Role per namespace and a
 * ClusterRole for cluster-scoped kinds; plus the inventory ConfigMaps. Nothing else: no pods or
 * replicasets (health reads the rendered objects' own status), no kind the render does not name.
 * Pure: the resource names come from a small table and the render's own CRDs, not from discovery.
 */
import type { KubeObject } from "./types.js";

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

export interface RbacRequest {
  objects: KubeObject[];
  /** Where namespaced objects without a namespace go (`--namespace`). */
  namespace: string;
  inventoryNamespace: string;
  /** With `--prune`, deleting is part of the job. */
  prune: boolean;
  createNamespace: boolean;
}

export interface RbacNeeds {
  /** Rules per namespace. */
  roles: Map<string, PolicyRule[]>;
  clusterRules: PolicyRule[];
}

/** Built-in cluster-scoped kinds, by `group/Kind`. */
const CLUSTER_SCOPED = new Set([
  "/Namespace",
  "/Node",
  "/PersistentVolume",
  "rbac.authorization.k8s.io/ClusterRole",
  "rbac.authorization.k8s.io/ClusterRoleBinding",
  "apiextensions.k8s.io/CustomResourceDefinition",
  "storage.k8s.io/StorageClass",
  "storage.k8s.io/CSIDriver",
  "scheduling.k8s.io/PriorityClass",
  "networking.k8s.io/IngressClass",
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
  "admissionregistration.k8s.io/MutatingWebhookConfiguration",
  "apiregistration.k8s.io/APIService",
]);

/** Plurals Kubernetes' default rule (lower case; `s` → `ses`, `y` → `ies`, else `+s`) gets wrong. */
const IRREGULAR: Record<string, string> = { endpoints: "endpoints" };

function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf("/");
  return slash === -1 ? "" : apiVersion.slice(0, slash);
}

export function resourceOf(kind: string): string {
  const lower = kind.toLowerCase();
  if (IRREGULAR[lower]) return IRREGULAR[lower];
  if (lower.endsWith("s")) return `${lower}es`;
  if (lower.endsWith("y") && !/[aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

interface CrdNames {
  plural: string;
  namespaced: boolean;
}

function crdsOf(objects: KubeObject[]): Map<string, CrdNames> {
  const crds = new Map<string, CrdNames>();
  for (const object of objects) {
    if (object.kind !== "CustomResourceDefinition") continue;
    const spec = object.spec as
      { group?: string; scope?: string; names?: { kind?: string; plural?: string } } | undefined;
    if (!spec?.group || !spec.names?.kind || !spec.names.plural) continue;
    crds.set(`${spec.group}/${spec.names.kind}`, {
      plural: spec.names.plural,
      namespaced: spec.scope !== "Cluster",
    });
  }
  return crds;
}

function addRule(rules: Map<string, Set<string>>, group: string, resource: string): void {
  const resources = rules.get(group) ?? new Set<string>();
  resources.add(resource);
  rules.set(group, resources);
}

function toRules(rules: Map<string, Set<string>>, verbs: string[]): PolicyRule[] {
  return [...rules.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, resources]) => ({
      apiGroups: [group],
      resources: [...resources].sort(),
      verbs: [...verbs],
    }));
}

export function rbacNeeds(request: RbacRequest): RbacNeeds {
  const verbs = ["get", "list", "watch", "create", "patch", ...(request.prune ? ["delete"] : [])];
  const crds = crdsOf(request.objects);
  const namespaced = new Map<string, Map<string, Set<string>>>();
  const cluster = new Map<string, Set<string>>();
  const objects = [...request.objects];
  if (request.createNamespace)
    objects.push({ apiVersion: "v1", kind: "Namespace", metadata: { name: request.namespace } });
  for (const object of objects) {
    const group = groupOf(object.apiVersion);
    const key = `${group}/${object.kind}`;
    const crd = crds.get(key);
    const resource = crd?.plural ?? resourceOf(object.kind);
    const isNamespaced = crd ? crd.namespaced : !CLUSTER_SCOPED.has(key);
    if (!isNamespaced) {
      addRule(cluster, group, resource);
      continue;
    }
    const namespace = (object.metadata?.namespace as string | undefined) || request.namespace;
    const rules = namespaced.get(namespace) ?? new Map<string, Set<string>>();
    addRule(rules, group, resource);
    namespaced.set(namespace, rules);
  }
  const roles = new Map<string, PolicyRule[]>();
  for (const [namespace, rules] of [...namespaced.entries()].sort(([a], [b]) => a.localeCompare(b)))
    roles.set(namespace, toRules(rules, verbs));
  // The inventory: one ConfigMap, read by name and written by server-side apply.
  const inventory = roles.get(request.inventoryNamespace) ?? [];
  if (!inventory.some((rule) => rule.apiGroups[0] === "" && rule.resources.includes("configmaps")))
    inventory.unshift({ apiGroups: [""], resources: ["configmaps"], verbs: ["get", "create", "patch"] });
  roles.set(request.inventoryNamespace, inventory);
  return { roles, clusterRules: toRules(cluster, verbs) };
}

/** The needs as RBAC objects named `name`, ready for `kubectl apply -f -` or a kustomize patch. */
export function rbacObjects(needs: RbacNeeds, name: string): KubeObject[] {
  const objects: KubeObject[] = [];
  for (const [namespace, rules] of needs.roles)
    objects.push({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name, namespace },
      rules,
    });
  if (needs.clusterRules.length > 0)
    objects.push({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name },
      rules: needs.clusterRules,
    });
  return objects;
}
