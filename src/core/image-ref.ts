import { UserError } from "./errors.js";

/**
 * Image references as Docker and the OCI distribution spec define them:
 * `[registry[:port]/]repository[:tag][@digest]`, with Docker Hub defaults
 * (`nginx` → `docker.io/library/nginx`).
 */
export interface ImageRef {
  /** Registry host, with port when given: `docker.io`, `ghcr.io`, `localhost:5000`. */
  registry: string;
  /** Repository path inside the registry: `library/nginx`, `acme/shop`. */
  repository: string;
  tag?: string;
  digest?: string;
}

export const DOCKER_HUB = "docker.io";
/** Docker Hub's API host: `docker.io` is only the name users write. */
export const DOCKER_HUB_API_HOST = "registry-1.docker.io";

/** OCI distribution spec tag grammar, unanchored, for building larger patterns (commands). */
export const TAG_SOURCE = "[A-Za-z0-9_][A-Za-z0-9._-]{0,127}";
/** OCI distribution spec tag grammar, anchored. */
export const TAG_PATTERN = new RegExp(`^${TAG_SOURCE}$`);
/** The only digest algorithm Ferry writes or trusts. */
export const DIGEST_PATTERN = /^sha256:[a-f0-9]{64}$/;
/** A repository path component (OCI distribution spec `<name>` grammar). */
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;
/** A registry host: DNS name or IPv4 with optional port, or a bracketed IPv6 address. */
const REGISTRY_HOST =
  /^(?:(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)(?:\.(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?))*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;
const MAX_NAME_LENGTH = 255;

export function isValidTag(tag: string): boolean {
  return TAG_PATTERN.test(tag);
}

export function isValidDigest(digest: string): boolean {
  return DIGEST_PATTERN.test(digest);
}

/**
 * A digest as people read it: the algorithm and 12 hex digits (`sha256:0123456789ab`), enough to
 * tell digests apart on a line; "" when there is none. Every message, table and title uses this one form.
 */
export function shortDigest(digest: string | undefined): string {
  if (digest === undefined) return "";
  const colon = digest.indexOf(":");
  return colon < 0 ? digest.slice(0, 19) : digest.slice(0, colon + 13);
}

/**
 * An image version as people read it: `tag (sha256:0123456789ab)`, the tag or the short digest
 * alone when only one is known, "(none)" when neither is. Every message naming a version uses this.
 */
export function describeVersion(version: { tag?: string; digest?: string } | undefined): string {
  const tag = version?.tag ?? "";
  const digest = shortDigest(version?.digest);
  if (tag && digest) return `${tag} (${digest})`;
  return tag || digest || "(none)";
}

export class InvalidImageRefError extends UserError {
  constructor(input: string, why: string) {
    super("invalid-image-ref", `invalid image reference ${JSON.stringify(truncate(input))}: ${why}`);
  }
}

/** Parses `registry/repo:tag@digest`; throws InvalidImageRefError naming what is wrong. */
export function parseImageRef(input: string): ImageRef {
  if (input.length === 0) throw new InvalidImageRefError(input, "empty");
  if (input.length > 512) throw new InvalidImageRefError(input, "longer than 512 characters");
  let rest = input;
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!isValidDigest(digest))
      throw new InvalidImageRefError(input, "digest must be sha256: and 64 hex digits");
  }
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf("/");
  const lastColon = rest.lastIndexOf(":");
  if (lastColon > lastSlash) {
    tag = rest.slice(lastColon + 1);
    rest = rest.slice(0, lastColon);
    if (!isValidTag(tag))
      throw new InvalidImageRefError(input, `tag ${JSON.stringify(truncate(tag))} is not a valid OCI tag`);
  }
  const { registry, repository } = splitName(rest, input);
  const ref: ImageRef = { registry, repository };
  if (tag !== undefined) ref.tag = tag;
  if (digest !== undefined) ref.digest = digest;
  return ref;
}

/** Parses a name without tag or digest (`ghcr.io/acme/shop`). */
export function parseImageName(input: string): ImageRef {
  const ref = parseImageRef(input);
  if (ref.tag !== undefined || ref.digest !== undefined) {
    throw new InvalidImageRefError(input, "expected a repository without tag or digest");
  }
  return ref;
}

function splitName(name: string, input: string): { registry: string; repository: string } {
  if (name.length === 0) throw new InvalidImageRefError(input, "missing repository");
  const firstSlash = name.indexOf("/");
  let registry = DOCKER_HUB;
  let repository = name;
  if (firstSlash >= 0) {
    const first = name.slice(0, firstSlash);
    // Docker's rule: the first component is a registry when it looks like a host.
    if (first.includes(".") || first.includes(":") || first === "localhost" || first.startsWith("[")) {
      registry = first;
      repository = name.slice(firstSlash + 1);
    }
  }
  if (!REGISTRY_HOST.test(registry))
    throw new InvalidImageRefError(input, `registry ${JSON.stringify(registry)} is not a valid host`);
  registry = canonicalRegistry(registry);
  if (registry === DOCKER_HUB && !repository.includes("/")) repository = `library/${repository}`;
  if (repository.length === 0) throw new InvalidImageRefError(input, "missing repository");
  for (const component of repository.split("/")) {
    if (!PATH_COMPONENT.test(component)) {
      throw new InvalidImageRefError(
        input,
        `repository component ${JSON.stringify(truncate(component))} must be lowercase letters, digits and separators`,
      );
    }
  }
  if (registry.length + 1 + repository.length > MAX_NAME_LENGTH)
    throw new InvalidImageRefError(input, "name longer than 255 characters");
  return { registry, repository };
}

/** `index.docker.io` and `registry-1.docker.io` are Docker Hub too. */
export function canonicalRegistry(registry: string): string {
  const lower = registry.toLowerCase();
  if (lower === "index.docker.io" || lower === DOCKER_HUB_API_HOST) return DOCKER_HUB;
  return lower;
}

/** `docker.io/library/nginx` — the normalized name used to compare images. */
export function imageName(ref: Pick<ImageRef, "registry" | "repository">): string {
  return `${ref.registry}/${ref.repository}`;
}

/**
 * Formats a reference. `familiar` drops Docker Hub defaults (`nginx:1.25`) the way users write them.
 */
export function formatImageRef(ref: ImageRef, options: { familiar?: boolean } = {}): string {
  let name = imageName(ref);
  if (options.familiar && ref.registry === DOCKER_HUB) {
    name = ref.repository.startsWith("library/") ? ref.repository.slice("library/".length) : ref.repository;
  }
  return `${name}${ref.tag !== undefined ? `:${ref.tag}` : ""}${ref.digest !== undefined ? `@${ref.digest}` : ""}`;
}

/**
 * True when both strings name the same repository, whatever their spelling: Docker Hub defaults
 * (`nginx` = `docker.io/library/nginx` = `index.docker.io/library/nginx`) and case (repository
 * names are lowercase by the OCI grammar; GitHub reports owners as they were typed, `Acme/Shop`).
 */
export function sameImage(a: string, b: string): boolean {
  try {
    return imageName(parseImageRef(a.toLowerCase())) === imageName(parseImageRef(b.toLowerCase()));
  } catch {
    return false;
  }
}

/** The host to send API requests to for a registry name. */
export function registryApiHost(registry: string): string {
  return registry === DOCKER_HUB ? DOCKER_HUB_API_HOST : registry;
}

/** Registries on loopback speak plain HTTP unless configured otherwise, as Docker does. */
export function isLoopbackRegistry(registry: string): boolean {
  const host = registry.startsWith("[")
    ? registry.slice(0, registry.indexOf("]") + 1)
    : registry.split(":")[0]!;
  return host === "localhost" || /^127(?:\.\d{1,3}){3}$/.test(host) || host === "[::1]";
}

function truncate(value: string): string {
  return value.length > 80 ? `${value.slice(0, 77)}...` : value;
}
