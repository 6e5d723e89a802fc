/**
 * The container images of a workload's Pod template, and which of them a change moves: matched by
 * container name, so `shop 1.7.3 → 1.8.0` is one line and a renamed container is one removed and
 * one added image. docs/diff.md "Images". Pure.
 */
import type { KubeObject } from "../kube-object.js";
import type { ImageChange, ObjectKey } from "./types.js";

const CONTAINER_LISTS = ["initContainers", "containers", "ephemeralContainers"] as const;

/** The Pod spec inside a workload of a known kind, or undefined. */
export function podSpecOf(object: KubeObject): Record<string, unknown> | undefined {
  const at = (value: unknown, ...path: string[]): unknown => {
    let current = value;
    for (const step of path) {
      if (typeof current !== "object" || current === null || Array.isArray(current)) return undefined;
      current = (current as Record<string, unknown>)[step];
    }
    return current;
  };
  let spec: unknown;
  switch (object.kind) {
    case "Pod":
      spec = object.spec;
      break;
    case "Deployment":
    case "StatefulSet":
    case "DaemonSet":
    case "ReplicaSet":
    case "ReplicationController":
    case "Job":
      spec = at(object, "spec", "template", "spec");
      break;
    case "CronJob":
      spec = at(object, "spec", "jobTemplate", "spec", "template", "spec");
      break;
    default:
      return undefined;
  }
  return typeof spec === "object" && spec !== null && !Array.isArray(spec)
    ? (spec as Record<string, unknown>)
    : undefined;
}

/** Image by container (`initContainers/migrate`, `containers/web`), in template order. */
function imagesOf(object: KubeObject | undefined): Map<string, string> {
  const images = new Map<string, string>();
  const spec = object ? podSpecOf(object) : undefined;
  if (!spec) return images;
  for (const list of CONTAINER_LISTS) {
    const containers = spec[list];
    if (!Array.isArray(containers)) continue;
    for (const container of containers) {
      if (typeof container !== "object" || container === null) continue;
      const { name, image } = container as { name?: unknown; image?: unknown };
      if (typeof name === "string" && typeof image === "string") images.set(`${list}/${name}`, image);
    }
  }
  return images;
}

/** `registry/repo:tag@digest` → its parts; lenient, since a rendered image need not be valid. */
export function splitImage(image: string): { name: string; tag?: string; digest?: string } {
  let rest = image;
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  const colon = rest.lastIndexOf(":");
  const tag = colon > rest.lastIndexOf("/") ? rest.slice(colon + 1) : undefined;
  const name = tag !== undefined ? rest.slice(0, colon) : rest;
  return { name, ...(tag !== undefined ? { tag } : {}), ...(digest !== undefined ? { digest } : {}) };
}

/** The images `head` runs that `base` did not, container by container. */
export function imageChanges(
  base: KubeObject | undefined,
  head: KubeObject | undefined,
  key: ObjectKey,
): ImageChange[] {
  const before = imagesOf(base);
  const after = imagesOf(head);
  const changes: ImageChange[] = [];
  const containers = [...after.keys(), ...[...before.keys()].filter((name) => !after.has(name))];
  for (const container of containers) {
    const from = before.get(container);
    const to = after.get(container);
    if (from === to) continue;
    const old = from !== undefined ? splitImage(from) : undefined;
    const now = to !== undefined ? splitImage(to) : undefined;
    changes.push({
      name: (now ?? old)!.name,
      container: container.slice(container.indexOf("/") + 1),
      ...(old?.tag !== undefined ? { from: old.tag } : {}),
      ...(now?.tag !== undefined ? { to: now.tag } : {}),
      ...(old?.digest !== undefined ? { fromDigest: old.digest } : {}),
      ...(now?.digest !== undefined ? { toDigest: now.digest } : {}),
      ...(old && now && old.name !== now.name ? { fromName: old.name } : {}),
      object: key,
    });
  }
  return changes;
}
