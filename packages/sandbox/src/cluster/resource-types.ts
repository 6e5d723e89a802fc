/**
 * The resource types the simulator serves: the built-in ones it ships with and those that
 * CustomResourceDefinitions add at run time. Discovery and routing both read this registry.
 */
export interface ResourceType {
  /** "" for the core group. */
  group: string;
  version: string;
  kind: string;
  /** URL segment, e.g. `deployments`. */
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  /** Has a `/status` subresource: spec writes keep status, status writes keep the rest. */
  hasStatus: boolean;
  /** Has a `/scale` subresource mapping to `spec.replicas`. */
  hasScale: boolean;
  /** Keeps `metadata.generation`, bumped when anything but metadata or status changes. */
  tracksGeneration: boolean;
  /** Custom resources refuse strategic merge patches, like the real server. */
  custom: boolean;
  /** Extra printer columns kubectl shows for this type (beyond Name and Age). */
  categories?: string[];
}

export const ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

export function apiVersionOf(type: Pick<ResourceType, "group" | "version">): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

type BuiltinSpec = Partial<ResourceType> & Pick<ResourceType, "kind" | "plural">;

function builtin(group: string, version: string, spec: BuiltinSpec): ResourceType {
  return {
    group,
    version,
    singular: spec.kind.toLowerCase(),
    namespaced: true,
    shortNames: [],
    hasStatus: false,
    hasScale: false,
    tracksGeneration: false,
    custom: false,
    ...spec,
  };
}

const workload = { hasStatus: true, tracksGeneration: true, categories: ["all"] };

export const BUILTIN_RESOURCE_TYPES: readonly ResourceType[] = [
  builtin("", "v1", {
    kind: "Namespace",
    plural: "namespaces",
    namespaced: false,
    shortNames: ["ns"],
    hasStatus: true,
  }),
  builtin("", "v1", { kind: "ConfigMap", plural: "configmaps", shortNames: ["cm"] }),
  builtin("", "v1", { kind: "Secret", plural: "secrets" }),
  builtin("", "v1", {
    kind: "Service",
    plural: "services",
    shortNames: ["svc"],
    hasStatus: true,
    categories: ["all"],
  }),
  builtin("", "v1", { kind: "ServiceAccount", plural: "serviceaccounts", shortNames: ["sa"] }),
  builtin("", "v1", {
    kind: "Pod",
    plural: "pods",
    shortNames: ["po"],
    hasStatus: true,
    categories: ["all"],
  }),
  builtin("", "v1", {
    kind: "PersistentVolumeClaim",
    plural: "persistentvolumeclaims",
    shortNames: ["pvc"],
    hasStatus: true,
  }),
  builtin("", "v1", { kind: "Event", plural: "events", shortNames: ["ev"] }),
  builtin("apps", "v1", {
    kind: "Deployment",
    plural: "deployments",
    shortNames: ["deploy"],
    hasScale: true,
    ...workload,
  }),
  builtin("apps", "v1", {
    kind: "StatefulSet",
    plural: "statefulsets",
    shortNames: ["sts"],
    hasScale: true,
    ...workload,
  }),
  builtin("apps", "v1", { kind: "DaemonSet", plural: "daemonsets", shortNames: ["ds"], ...workload }),
  builtin("apps", "v1", {
    kind: "ReplicaSet",
    plural: "replicasets",
    shortNames: ["rs"],
    hasScale: true,
    ...workload,
  }),
  builtin("batch", "v1", { kind: "Job", plural: "jobs", ...workload }),
  builtin("batch", "v1", { kind: "CronJob", plural: "cronjobs", shortNames: ["cj"], ...workload }),
  builtin("networking.k8s.io", "v1", {
    kind: "Ingress",
    plural: "ingresses",
    shortNames: ["ing"],
    hasStatus: true,
    tracksGeneration: true,
  }),
  builtin("networking.k8s.io", "v1", {
    kind: "NetworkPolicy",
    plural: "networkpolicies",
    shortNames: ["netpol"],
  }),
  builtin("rbac.authorization.k8s.io", "v1", { kind: "Role", plural: "roles" }),
  builtin("rbac.authorization.k8s.io", "v1", { kind: "RoleBinding", plural: "rolebindings" }),
  builtin("rbac.authorization.k8s.io", "v1", {
    kind: "ClusterRole",
    plural: "clusterroles",
    namespaced: false,
  }),
  builtin("rbac.authorization.k8s.io", "v1", {
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    namespaced: false,
  }),
  builtin("coordination.k8s.io", "v1", { kind: "Lease", plural: "leases" }),
  builtin("policy", "v1", {
    kind: "PodDisruptionBudget",
    plural: "poddisruptionbudgets",
    shortNames: ["pdb"],
  }),
  builtin("apiextensions.k8s.io", "v1", {
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    namespaced: false,
    shortNames: ["crd", "crds"],
    hasStatus: true,
    tracksGeneration: true,
  }),
];

/** Lookup by URL (group, version, plural) and by object (apiVersion, kind). */
export class ResourceRegistry {
  private readonly types: ResourceType[] = [...BUILTIN_RESOURCE_TYPES];

  all(): readonly ResourceType[] {
    return this.types;
  }

  byPlural(group: string, version: string, plural: string): ResourceType | undefined {
    return this.types.find((t) => t.group === group && t.version === version && t.plural === plural);
  }

  byKind(apiVersion: string, kind: string): ResourceType | undefined {
    const [group, version] = splitApiVersion(apiVersion);
    return this.types.find((t) => t.group === group && t.version === version && t.kind === kind);
  }

  /** Group versions in discovery order: core first, then groups as registered. */
  groupVersions(): { group: string; versions: string[] }[] {
    const groups = new Map<string, string[]>();
    for (const type of this.types) {
      const versions = groups.get(type.group) ?? [];
      if (!versions.includes(type.version)) versions.push(type.version);
      groups.set(type.group, versions);
    }
    return [...groups].map(([group, versions]) => ({ group, versions }));
  }

  /** Replaces every type that `crdName` registered earlier (a CRD update may drop versions). */
  register(types: ResourceType[]): void {
    for (const type of types) {
      this.unregister(type.group, type.plural);
    }
    this.types.push(...types);
  }

  unregister(group: string, plural: string): ResourceType[] {
    const removed = this.types.filter((t) => t.custom && t.group === group && t.plural === plural);
    for (const type of removed) this.types.splice(this.types.indexOf(type), 1);
    return removed;
  }
}

export function splitApiVersion(apiVersion: string): [group: string, version: string] {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? ["", apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

/** The resource types a CustomResourceDefinition object declares (served versions only). */
export function typesFromCrd(crd: Record<string, unknown>): ResourceType[] {
  const spec = (crd.spec ?? {}) as {
    group?: string;
    scope?: string;
    names?: {
      plural?: string;
      singular?: string;
      kind?: string;
      shortNames?: string[];
      categories?: string[];
    };
    versions?: { name?: string; served?: boolean; subresources?: { status?: unknown; scale?: unknown } }[];
  };
  const names = spec.names ?? {};
  if (!spec.group || !names.plural || !names.kind) return [];
  return (spec.versions ?? [])
    .filter((v) => v.name && v.served !== false)
    .map((v) => ({
      group: spec.group!,
      version: v.name!,
      kind: names.kind!,
      plural: names.plural!,
      singular: names.singular ?? names.kind!.toLowerCase(),
      namespaced: spec.scope !== "Cluster",
      shortNames: names.shortNames ?? [],
      hasStatus: v.subresources?.status !== undefined,
      hasScale: v.subresources?.scale !== undefined,
      tracksGeneration: true,
      custom: true,
      ...(names.categories ? { categories: names.categories } : {}),
    }));
}
