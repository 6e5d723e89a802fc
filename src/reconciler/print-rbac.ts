/**
 * `ferry reconcile --print-rbac`: fetches and renders the path as a cycle would, and prints the
 * Role (and ClusterRole) its objects need (src/reconciler/rbac-rules.ts). Talks to no cluster.
 */
import { stringify } from "yaml";
import { rbacNeeds, rbacObjects } from "./rbac-rules.js";
import { renderPath } from "./render-folder.js";
import { configSourceOf, renderOptionsOf, type ReconcilerSetup } from "./start.js";

export async function printRbac(setup: ReconcilerSetup, name = "ferry-reconciler"): Promise<string> {
  const instance = setup.instance ?? setup.environment ?? "default";
  const namespace = setup.namespace ?? "default";
  const { dir } = await (setup.source ?? configSourceOf(setup, instance)).fetch();
  // Decrypted as a cycle would (sops encrypts a manifest's kind too, unless told not to).
  const rendered = await renderPath(dir, setup.path, renderOptionsOf(setup, namespace));
  const needs = rbacNeeds({
    objects: rendered.map(({ object }) => object),
    namespace,
    inventoryNamespace: setup.inventoryNamespace ?? namespace,
    prune: setup.prune?.prune ?? false,
    createNamespace: setup.createNamespace ?? false,
  });
  return rbacObjects(needs, name)
    .map((object) => stringify(object))
    .join("---\n");
}
