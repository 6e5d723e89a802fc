import { isScalar } from "yaml";
import { parseImageRef, sameImage } from "../image-ref.js";
import type { ImageTarget, Site } from "./target.js";
import { documentKind, scalarText, walkDocument, type ParsedYaml } from "../yaml/yaml-tree.js";

const CONTAINER_LISTS = new Set(["containers", "initContainers", "ephemeralContainers"]);

/**
 * `image: repo:tag@digest` strings of containers and initContainers in Kubernetes objects: Pod,
 * Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob — and any other kind with a pod
 * template (Argo Rollouts, `List` items), since the container list is found wherever it sits.
 */
export function findManifestTargets(parsed: ParsedYaml, image: string): ImageTarget[] {
  const targets: ImageTarget[] = [];
  for (const document of parsed.documents) {
    // A Kubernetes object has both; a values file may have a `kind` option of its own.
    const { kind, apiVersion } = documentKind(parsed, document);
    if (kind === undefined || apiVersion === undefined) continue;
    walkDocument(document, (visit) => {
      const { path, node } = visit;
      if (path.length < 3 || !isScalar(node) || path[path.length - 1] !== "image") return;
      const list = path[path.length - 3];
      if (typeof path[path.length - 2] !== "number" || typeof list !== "string" || !CONTAINER_LISTS.has(list))
        return;
      const value = scalarText(parsed.text, node);
      if (value === undefined || !namesImage(value, image)) return;
      const site: Site = { document, scalar: node, path, field: "image" };
      if (visit.alias) site.alias = visit.alias;
      targets.push({ kind: "manifest", document, image: site });
    });
  }
  return targets;
}

/** True when an `image:` string is a valid reference to the image (templates and junk are not). */
export function namesImage(value: string, image: string): boolean {
  try {
    parseImageRef(value);
  } catch {
    return false;
  }
  return sameImage(value, image);
}
