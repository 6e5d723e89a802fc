import { makeHint, type RegistryHint } from "./registry-hint.js";

/**
 * Pure translations of each provider's webhook payload into hints. Anything unrecognised yields
 * no hint (the route answers 202 and ignores it); none of them fetches anything.
 */

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hostOf(url: unknown): string | undefined {
  if (typeof url !== "string") return undefined;
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}

/** Manifest media types: events about anything else (layers, configs) are blob events. */
const MANIFEST_MEDIA_TYPES = new Set([
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.docker.distribution.manifest.v2+json",
  "application/vnd.docker.distribution.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.v1+prettyjws",
]);

/**
 * CNCF distribution envelope `{"events":[…]}` (docs: distribution/docs/content/about/notifications.md).
 * Only manifest `push` events count; pulls, deletes, mounts and blob pushes are ignored. The
 * registry host comes from the event's own manifest URL, falling back to the request host.
 */
export function hintsFromDistribution(payload: unknown): RegistryHint[] {
  if (!isObject(payload) || !Array.isArray(payload.events)) return [];
  const hints: RegistryHint[] = [];
  for (const event of payload.events) {
    if (!isObject(event) || event.action !== "push" || !isObject(event.target)) continue;
    const target = event.target;
    const isManifest =
      (typeof target.mediaType === "string" && MANIFEST_MEDIA_TYPES.has(target.mediaType)) ||
      (typeof target.url === "string" && /\/manifests\/[^/]+$/.test(target.url)) ||
      typeof target.tag === "string";
    if (!isManifest) continue;
    const request = isObject(event.request) ? event.request : {};
    const registry = hostOf(target.url) ?? (typeof request.host === "string" ? request.host : undefined);
    const hint = makeHint("distribution", registry, target.repository, target.tag, target.digest);
    if (hint) hints.push(hint);
  }
  return hints;
}

const HARBOR_PUSH_TYPES = new Set(["PUSH_ARTIFACT", "pushImage", "harbor.artifact.pushed"]);

/**
 * Harbor: `PUSH_ARTIFACT` (2.x default format), `pushImage` (1.x) and the CloudEvents format
 * (`harbor.artifact.pushed`, payload under `data`). One hint per pushed resource; the registry
 * host is the first component of `resource_url`.
 */
export function hintsFromHarbor(payload: unknown): RegistryHint[] {
  if (!isObject(payload) || typeof payload.type !== "string" || !HARBOR_PUSH_TYPES.has(payload.type))
    return [];
  const data = isObject(payload.event_data)
    ? payload.event_data
    : isObject(payload.data)
      ? payload.data
      : undefined;
  if (!data || !Array.isArray(data.resources)) return [];
  const repository = isObject(data.repository) ? data.repository : {};
  const fullName =
    typeof repository.repo_full_name === "string"
      ? repository.repo_full_name
      : typeof repository.namespace === "string" && typeof repository.name === "string"
        ? `${repository.namespace}/${repository.name}`
        : undefined;
  const hints: RegistryHint[] = [];
  for (const resource of data.resources) {
    if (!isObject(resource) || typeof resource.resource_url !== "string") continue;
    const registry = resource.resource_url.split("/")[0];
    const hint = makeHint("harbor", registry, fullName, resource.tag, resource.digest);
    if (hint) hints.push(hint);
  }
  return hints;
}

/**
 * Docker Hub repository webhook: `push_data.tag` and `repository.repo_name`. Docker Hub has no
 * event type: every payload is a push. `callback_url` is never fetched (docs/reliability.md row 10).
 */
export function hintsFromDockerHub(payload: unknown): RegistryHint[] {
  if (!isObject(payload) || !isObject(payload.push_data) || !isObject(payload.repository)) return [];
  const repository = payload.repository;
  const name =
    typeof repository.repo_name === "string"
      ? repository.repo_name
      : typeof repository.namespace === "string" && typeof repository.name === "string"
        ? `${repository.namespace}/${repository.name}`
        : undefined;
  const hint = makeHint("dockerhub", "docker.io", name, payload.push_data.tag);
  return hint ? [hint] : [];
}

/**
 * Quay "repository push" notification: `docker_url` (`quay.io/ns/repo`) and `updated_tags`, a list
 * of tags in current Quay and a tag → image id map in older versions. One hint per tag.
 */
export function hintsFromQuay(payload: unknown): RegistryHint[] {
  if (!isObject(payload) || typeof payload.docker_url !== "string" || payload.updated_tags === undefined)
    return [];
  const slash = payload.docker_url.indexOf("/");
  if (slash <= 0) return [];
  const registry = payload.docker_url.slice(0, slash);
  const repository = payload.docker_url.slice(slash + 1);
  const tags = Array.isArray(payload.updated_tags)
    ? payload.updated_tags
    : isObject(payload.updated_tags)
      ? Object.keys(payload.updated_tags)
      : [];
  const hints: RegistryHint[] = [];
  for (const tag of tags) {
    const hint = makeHint("quay", registry, repository, tag);
    if (hint?.tag !== undefined) hints.push(hint);
  }
  if (tags.length === 0) {
    const hint = makeHint("quay", registry, repository);
    if (hint) hints.push(hint);
  }
  return hints;
}

export class InvalidGenericPayload extends Error {}

/**
 * Ferry's own format `{"repository": "ghcr.io/acme/shop", "tag": "1.8.0", "digest": "sha256:…"}`
 * for CI systems. Unlike the providers' formats this one is ours, so a wrong field is an error
 * the sender should see (400), not a silently ignored shape.
 */
export function hintsFromGeneric(payload: unknown): RegistryHint[] {
  if (!isObject(payload) || typeof payload.repository !== "string") {
    throw new InvalidGenericPayload('expected {"repository": string, "tag"?: string, "digest"?: string}');
  }
  if (payload.tag !== undefined && typeof payload.tag !== "string")
    throw new InvalidGenericPayload("tag must be a string");
  if (payload.digest !== undefined && typeof payload.digest !== "string")
    throw new InvalidGenericPayload("digest must be a string");
  const hint = makeHint("generic", undefined, payload.repository, payload.tag, payload.digest);
  if (!hint) throw new InvalidGenericPayload("repository is not a valid image name");
  if (payload.tag !== undefined && hint.tag === undefined)
    throw new InvalidGenericPayload("tag is not a valid OCI tag");
  if (payload.digest !== undefined && hint.digest !== payload.digest)
    throw new InvalidGenericPayload("digest must be sha256: and 64 hex digits");
  return [hint];
}
