import { describe, expect, it } from "vitest";
import { rbacNeeds, rbacObjects, resourceOf } from "../../src/reconciler/rbac-rules.js";
import type { KubeObject } from "../../src/reconciler/types.js";

const object = (apiVersion: string, kind: string, namespace?: string): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name: "x", ...(namespace ? { namespace } : {}) },
});

describe("the RBAC a render needs", () => {
  it("names the plural resource of each rendered kind, and nothing the render does not name", () => {
    const needs = rbacNeeds({
      objects: [
        object("apps/v1", "Deployment"),
        object("v1", "Service"),
        object("networking.k8s.io/v1", "Ingress"),
        object("networking.k8s.io/v1", "NetworkPolicy"),
        object("v1", "Endpoints"),
      ],
      namespace: "shop",
      inventoryNamespace: "shop",
      prune: true,
      createNamespace: false,
    });
    const all = ["get", "list", "watch", "create", "patch", "delete"];
    expect(needs.roles.get("shop")).toEqual([
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "create", "patch"] },
      { apiGroups: [""], resources: ["endpoints", "services"], verbs: all },
      { apiGroups: ["apps"], resources: ["deployments"], verbs: all },
      { apiGroups: ["networking.k8s.io"], resources: ["ingresses", "networkpolicies"], verbs: all },
    ]);
    expect(needs.clusterRules).toEqual([]);
    const resources = [...needs.roles.values()].flat().flatMap((rule) => rule.resources);
    for (const never of ["pods", "replicasets", "secrets"]) expect(resources).not.toContain(never);
  });

  it("takes a custom resource's plural and scope from the CRD in the render, cluster-scoped kinds to a ClusterRole", () => {
    const crd: KubeObject = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "widgetries.acme.dev" },
      spec: { group: "acme.dev", scope: "Namespaced", names: { kind: "Widget", plural: "widgetries" } },
    };
    const needs = rbacNeeds({
      objects: [crd, object("acme.dev/v1", "Widget"), object("v1", "ConfigMap", "other")],
      namespace: "shop",
      inventoryNamespace: "shop",
      prune: false,
      createNamespace: true,
    });
    const verbs = ["get", "list", "watch", "create", "patch"];
    expect(needs.roles.get("shop")).toEqual([
      { apiGroups: [""], resources: ["configmaps"], verbs: ["get", "create", "patch"] },
      { apiGroups: ["acme.dev"], resources: ["widgetries"], verbs },
    ]);
    expect(needs.roles.get("other")).toEqual([{ apiGroups: [""], resources: ["configmaps"], verbs }]);
    expect(needs.clusterRules).toEqual([
      { apiGroups: [""], resources: ["namespaces"], verbs },
      { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs },
    ]);
    expect(
      rbacObjects(needs, "ferry-reconciler").map((o) => `${o.kind} ${o.metadata.namespace ?? ""}`),
    ).toEqual(["Role other", "Role shop", "ClusterRole "]);
  });

  it("pluralises as Kubernetes does", () => {
    expect(["Ingress", "NetworkPolicy", "Gateway", "StatefulSet", "Endpoints"].map(resourceOf)).toEqual([
      "ingresses",
      "networkpolicies",
      "gateways",
      "statefulsets",
      "endpoints",
    ]);
  });
});
