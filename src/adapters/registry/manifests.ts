import { isValidDigest } from "../../core/image-ref.js";
import type { ImageDescription } from "../../app/ports.js";
import type { SecretRedactor } from "../../core/redact.js";
import type { Authenticator } from "./auth.js";
import { RegistryNotFoundError, RegistryProtocolError } from "./errors.js";
import { describe } from "./image-description.js";
import {
  fetchBlob,
  fetchManifest,
  manifestUrl,
  parseJsonObject,
  type FetchedManifest,
  type ManifestContext,
} from "./manifest-fetch.js";
import { MANIFEST_ACCEPT, OCI_INDEX } from "./media-types.js";
import type { RegistryLimits } from "./registry-limits.js";
import { failFor as failResponse } from "./response-errors.js";
import type { RegistryState } from "./transport.js";

/**
 * Manifests and config blobs: fetched and digest-verified in manifest-fetch.ts, HEAD for digests with a GET
 * fallback, the OCI referrers API, and image descriptions from image-description.ts.
 */

export type ArtifactManifest = FetchedManifest;

export interface ManifestReader {
  resolveDigest(state: RegistryState, repository: string, reference: string): Promise<string>;
  describe(state: RegistryState, repository: string, reference: string): Promise<ImageDescription>;
  /** A manifest's JSON by tag or digest, digest-verified; undefined when the registry has none (404). */
  manifest(
    state: RegistryState,
    repository: string,
    reference: string,
  ): Promise<ArtifactManifest | undefined>;
  /** A blob by digest, at most `maxBytes`, verified against its digest. */
  blob(state: RegistryState, repository: string, digest: string, maxBytes: number): Promise<Buffer>;
  /** The OCI 1.1 referrers API; undefined when the registry does not offer it (404). */
  referrers(
    state: RegistryState,
    repository: string,
    digest: string,
  ): Promise<Record<string, unknown> | undefined>;
}

export function createManifestReader(deps: {
  auth: Authenticator;
  limits: RegistryLimits;
  secrets: SecretRedactor;
}): ManifestReader {
  const { limits, secrets } = deps;
  const ctx: ManifestContext = {
    request: deps.auth.request,
    limits,
    manifestCache: new Map(),
    configCache: new Map(),
    tagDigests: new Map(),
    failFor: (state, repository, what, response) => failResponse(state, repository, what, response, secrets),
  };
  return {
    async manifest(state, repository, reference) {
      try {
        return await fetchManifest(ctx, state, repository, reference);
      } catch (error) {
        if (error instanceof RegistryNotFoundError) return undefined;
        throw error;
      }
    },
    blob: (state, repository, digest, maxBytes) =>
      fetchBlob(ctx, state, repository, digest, "blob", "*/*", maxBytes),
    referrers: (state, repository, digest) => referrers(ctx, state, repository, digest),
    resolveDigest: (state, repository, reference) => resolveDigest(ctx, state, repository, reference),
    describe: (state, repository, reference) => describe(ctx, state, repository, reference),
  };
}

async function resolveDigest(
  ctx: ManifestContext,
  state: RegistryState,
  repository: string,
  reference: string,
): Promise<string> {
  const { request, failFor } = ctx;
  const response = await request(
    state,
    repository,
    manifestUrl(state, repository, reference),
    "HEAD",
    MANIFEST_ACCEPT,
    0,
  );
  if (response.status !== 200) failFor(state, repository, `manifest ${reference}`, response);
  const digest = response.headers.get("docker-content-digest");
  if (digest && isValidDigest(digest)) {
    if (reference.startsWith("sha256:") && digest !== reference) {
      throw new RegistryProtocolError(
        "registry-digest-mismatch",
        `${state.registry}/${repository}@${reference}: registry announced ${digest}`,
      );
    }
    return digest;
  }
  // Some registries omit the header on HEAD: fall back to GET and hash the body ourselves.
  return (await fetchManifest(ctx, state, repository, reference)).digest;
}

async function referrers(
  ctx: ManifestContext,
  state: RegistryState,
  repository: string,
  digest: string,
): Promise<Record<string, unknown> | undefined> {
  const { request, limits, failFor } = ctx;
  if (!isValidDigest(digest))
    throw new RegistryProtocolError(
      "registry-bad-reference",
      `${state.registry}/${repository}: invalid digest`,
    );
  const url = new URL(`${state.origin}/v2/${repository}/referrers/${digest}`);
  const response = await request(state, repository, url, "GET", OCI_INDEX, limits.maxManifestBytes);
  // The OCI distribution spec: a registry without the API answers 404 (distribution 2.8 does).
  if (response.status === 404) return undefined;
  if (response.status !== 200) failFor(state, repository, `referrers of ${digest}`, response);
  return parseJsonObject(state, repository, `referrers of ${digest}`, response.body);
}
