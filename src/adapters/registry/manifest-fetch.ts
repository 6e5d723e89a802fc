import { createHash } from "node:crypto";
import { isValidDigest, isValidTag } from "../../core/image-ref.js";
import type { RegistryRequest } from "./auth.js";
import { RegistryProtocolError } from "./errors.js";
import { bareMediaType, MANIFEST_ACCEPT, MANIFEST_MEDIA_TYPES } from "./media-types.js";
import type { RegistryLimits } from "./registry-limits.js";
import type { Exchange, RegistryState } from "./transport.js";

/**
 * Fetching manifests and blobs for manifests.ts: GET with all four manifest media types in `Accept`
 * (distribution answers schema1 otherwise), bodies verified against a locally computed sha256 (and against
 * `Docker-Content-Digest`), tags seen before HEADed for their digest. Manifests by digest are immutable and
 * cached for the life of the client.
 */

export interface FetchedManifest {
  digest: string;
  mediaType: string;
  json: Record<string, unknown>;
}

export interface ImageConfigBlob {
  created?: string;
  os?: string;
  architecture?: string;
  variant?: string;
  config?: { Labels?: Record<string, string> | null };
}

/** What the manifest reader's steps share: the authenticated request, the limits and the caches. */
export interface ManifestContext {
  request: RegistryRequest;
  limits: RegistryLimits;
  manifestCache: Map<string, FetchedManifest>;
  /** Config blobs by registry and digest: the promise, so concurrent describes share one fetch. */
  configCache: Map<string, Promise<ImageConfigBlob>>;
  /** Tags seen before: later describes HEAD them (free on Docker Hub) and reuse the cached manifest. */
  tagDigests: Map<string, string>;
  /** Throws the error for a response that is not the one expected (response-errors.ts). */
  failFor: (state: RegistryState, repository: string, what: string, response: Exchange) => never;
}

function verifyDigest(
  state: RegistryState,
  repository: string,
  reference: string,
  body: Buffer,
  announced: string | null,
): string {
  const digest = `sha256:${createHash("sha256").update(body).digest("hex")}`;
  if (announced && announced !== digest) {
    throw new RegistryProtocolError(
      "registry-digest-mismatch",
      `${state.registry}/${repository}:${reference}: Docker-Content-Digest ${announced} does not match the body (${digest})`,
    );
  }
  if (reference.startsWith("sha256:") && reference !== digest) {
    throw new RegistryProtocolError(
      "registry-digest-mismatch",
      `${state.registry}/${repository}@${reference}: body digests to ${digest}`,
    );
  }
  return digest;
}

export function manifestUrl(state: RegistryState, repository: string, reference: string): URL {
  if (!isValidTag(reference) && !isValidDigest(reference)) {
    throw new RegistryProtocolError(
      "registry-bad-reference",
      `${JSON.stringify(reference.slice(0, 80))} is neither a tag nor a sha256 digest`,
    );
  }
  return new URL(`${state.origin}/v2/${repository}/manifests/${reference}`);
}

export async function fetchManifest(
  ctx: ManifestContext,
  state: RegistryState,
  repository: string,
  reference: string,
): Promise<FetchedManifest> {
  const { request, limits, manifestCache, tagDigests, failFor } = ctx;
  const cached = manifestCache.get(`${state.registry}/${repository}@${reference}`);
  if (cached) return cached;
  const tagKey = `${state.registry}/${repository}:${reference}`;
  if (!isValidDigest(reference) && tagDigests.has(tagKey)) {
    const head = await request(
      state,
      repository,
      manifestUrl(state, repository, reference),
      "HEAD",
      MANIFEST_ACCEPT,
      0,
    );
    const digest = head.headers.get("docker-content-digest");
    if (head.status === 200 && digest && isValidDigest(digest)) {
      tagDigests.set(tagKey, digest);
      return (
        manifestCache.get(`${state.registry}/${repository}@${digest}`) ??
        fetchManifest(ctx, state, repository, digest)
      );
    }
    if (head.status !== 200) failFor(state, repository, `manifest ${reference}`, head);
  }
  const response = await request(
    state,
    repository,
    manifestUrl(state, repository, reference),
    "GET",
    MANIFEST_ACCEPT,
    limits.maxManifestBytes,
  );
  if (response.status !== 200) failFor(state, repository, `manifest ${reference}`, response);
  const mediaType = bareMediaType(response.headers.get("content-type"));
  if (!(MANIFEST_MEDIA_TYPES as readonly string[]).includes(mediaType)) {
    throw new RegistryProtocolError(
      "registry-bad-content-type",
      `${state.registry}/${repository}:${reference}: unsupported manifest Content-Type ${JSON.stringify(mediaType.slice(0, 100))}`,
    );
  }
  const digest = verifyDigest(
    state,
    repository,
    reference,
    response.body,
    response.headers.get("docker-content-digest"),
  );
  const json = manifestJson(state, repository, reference, response.body, mediaType);
  const manifest = { digest, mediaType, json };
  manifestCache.set(`${state.registry}/${repository}@${digest}`, manifest);
  if (!isValidDigest(reference)) tagDigests.set(tagKey, digest);
  return manifest;
}

/** A manifest's body as JSON: a schemaVersion 2 object whose mediaType, if any, is its Content-Type's. */
function manifestJson(
  state: RegistryState,
  repository: string,
  reference: string,
  body: Buffer,
  mediaType: string,
): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    throw new RegistryProtocolError(
      "registry-bad-json",
      `${state.registry}/${repository}:${reference}: manifest is malformed JSON`,
    );
  }
  if (
    typeof json !== "object" ||
    json === null ||
    Array.isArray(json) ||
    (json as { schemaVersion?: unknown }).schemaVersion !== 2
  ) {
    throw new RegistryProtocolError(
      "registry-bad-json",
      `${state.registry}/${repository}:${reference}: manifest is not a schemaVersion 2 object`,
    );
  }
  const declared = (json as { mediaType?: unknown }).mediaType;
  if (typeof declared === "string" && declared !== mediaType) {
    throw new RegistryProtocolError(
      "registry-bad-content-type",
      `${state.registry}/${repository}:${reference}: Content-Type ${mediaType} contradicts the manifest's mediaType`,
    );
  }
  return json as Record<string, unknown>;
}

/** GET a blob (`what` names it in errors) within `maxBytes`, checked against its digest. */
export async function fetchBlob(
  ctx: ManifestContext,
  state: RegistryState,
  repository: string,
  digest: string,
  what: string,
  accept: string,
  maxBytes: number,
): Promise<Buffer> {
  const { request, failFor } = ctx;
  if (!isValidDigest(digest))
    throw new RegistryProtocolError(
      "registry-bad-json",
      `${state.registry}/${repository}: invalid ${what} digest`,
    );
  const url = new URL(`${state.origin}/v2/${repository}/blobs/${digest}`);
  const response = await request(state, repository, url, "GET", accept, maxBytes);
  if (response.status !== 200) failFor(state, repository, `${what} ${digest}`, response);
  verifyDigest(state, repository, digest, response.body, null);
  return response.body;
}

/** A registry body that must be a JSON object (`what` names it in errors). */
export function parseJsonObject(
  state: RegistryState,
  repository: string,
  what: string,
  body: Buffer,
): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    throw new RegistryProtocolError(
      "registry-bad-json",
      `${state.registry}/${repository}: ${what} is malformed JSON`,
    );
  }
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new RegistryProtocolError(
      "registry-bad-json",
      `${state.registry}/${repository}: ${what} is not an object`,
    );
  return json as Record<string, unknown>;
}
