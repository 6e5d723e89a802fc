import { createHash } from "node:crypto";
import type { ImageDescription } from "../../app/ports.js";
import { isValidDigest, isValidTag } from "../../core/image-ref.js";
import type { SecretRedactor } from "../../core/redact.js";
import type { Authenticator } from "./auth.js";
import { RegistryNotFoundError, RegistryProtocolError } from "./errors.js";
import {
  bareMediaType,
  isIndexMediaType,
  MANIFEST_ACCEPT,
  MANIFEST_MEDIA_TYPES,
  OCI_INDEX,
} from "./media-types.js";
import type { RegistryLimits } from "./registry-limits.js";
import { failFor as failResponse } from "./response-errors.js";
import type { Exchange, RegistryState } from "./transport.js";

/**
 * Manifests and config blobs: GET with all four manifest media types in `Accept` (distribution
 * answers schema1 otherwise), bodies verified against a locally computed sha256 (and against
 * `Docker-Content-Digest`), HEAD for digests with a GET fallback, an image index resolved to one
 * platform's config for `created` and labels. Manifests by digest and config blobs are immutable
 * and cached for the life of the client.
 */

export type ArtifactManifest = FetchedManifest;

interface FetchedManifest {
  digest: string;
  mediaType: string;
  json: Record<string, unknown>;
}

interface ImageConfigBlob {
  created?: string;
  os?: string;
  architecture?: string;
  variant?: string;
  config?: { Labels?: Record<string, string> | null };
}

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
  const request = deps.auth.request;
  const manifestCache = new Map<string, FetchedManifest>();
  const configCache = new Map<string, Promise<ImageConfigBlob>>();
  // Tags seen before: later describes HEAD them (free on Docker Hub) and reuse the cached manifest.
  const tagDigests = new Map<string, string>();
  const failFor = (state: RegistryState, repository: string, what: string, response: Exchange): never =>
    failResponse(state, repository, what, response, secrets);

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

  function manifestUrl(state: RegistryState, repository: string, reference: string): URL {
    if (!isValidTag(reference) && !isValidDigest(reference)) {
      throw new RegistryProtocolError(
        "registry-bad-reference",
        `${JSON.stringify(reference.slice(0, 80))} is neither a tag nor a sha256 digest`,
      );
    }
    return new URL(`${state.origin}/v2/${repository}/manifests/${reference}`);
  }

  async function fetchManifest(
    state: RegistryState,
    repository: string,
    reference: string,
  ): Promise<FetchedManifest> {
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
          fetchManifest(state, repository, digest)
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
    let json: unknown;
    try {
      json = JSON.parse(response.body.toString("utf8"));
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
    const manifest = { digest, mediaType, json: json as Record<string, unknown> };
    manifestCache.set(`${state.registry}/${repository}@${digest}`, manifest);
    if (!isValidDigest(reference)) tagDigests.set(tagKey, digest);
    return manifest;
  }

  /** Config blobs by digest; the promise is cached so concurrent describes share one fetch. */
  function fetchConfig(state: RegistryState, repository: string, digest: string): Promise<ImageConfigBlob> {
    const key = `${state.registry}/${digest}`;
    let config = configCache.get(key);
    if (!config) {
      config = fetchConfigOnce(state, repository, digest);
      configCache.set(key, config);
      config.catch(() => configCache.delete(key));
    }
    return config;
  }

  async function fetchConfigOnce(
    state: RegistryState,
    repository: string,
    digest: string,
  ): Promise<ImageConfigBlob> {
    const body = await fetchBlob(
      state,
      repository,
      digest,
      "config blob",
      "application/json, */*",
      limits.maxConfigBytes,
    );
    return parseJsonObject(state, repository, `config blob ${digest}`, body) as ImageConfigBlob;
  }

  /** GET a blob (`what` names it in errors) within `maxBytes`, checked against its digest. */
  async function fetchBlob(
    state: RegistryState,
    repository: string,
    digest: string,
    what: string,
    accept: string,
    maxBytes: number,
  ): Promise<Buffer> {
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
  function parseJsonObject(
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

  return {
    async manifest(state, repository, reference) {
      try {
        return await fetchManifest(state, repository, reference);
      } catch (error) {
        if (error instanceof RegistryNotFoundError) return undefined;
        throw error;
      }
    },

    blob: (state, repository, digest, maxBytes) =>
      fetchBlob(state, repository, digest, "blob", "*/*", maxBytes),

    async referrers(state, repository, digest) {
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
    },

    async resolveDigest(state: RegistryState, repository: string, reference: string): Promise<string> {
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
      return (await fetchManifest(state, repository, reference)).digest;
    },

    async describe(state: RegistryState, repository: string, reference: string): Promise<ImageDescription> {
      const manifest = await fetchManifest(state, repository, reference);
      let platforms: string[] = [];
      let imageManifest = manifest;
      if (isIndexMediaType(manifest.mediaType)) {
        const entries = Array.isArray(manifest.json.manifests)
          ? (manifest.json.manifests as {
              digest?: unknown;
              platform?: { os?: unknown; architecture?: unknown; variant?: unknown };
            }[])
          : [];
        const withPlatform = entries.filter(
          (entry) =>
            typeof entry.platform?.os === "string" &&
            typeof entry.platform.architecture === "string" &&
            entry.platform.os !== "unknown",
        );
        platforms = [
          ...new Set(
            withPlatform.map((entry) =>
              formatPlatform(
                entry.platform!.os as string,
                entry.platform!.architecture as string,
                entry.platform!.variant,
              ),
            ),
          ),
        ];
        // created and labels come from one platform's config; linux/amd64 when present.
        const chosen =
          withPlatform.find(
            (entry) => entry.platform!.os === "linux" && entry.platform!.architecture === "amd64",
          ) ??
          withPlatform[0] ??
          entries[0];
        if (!chosen || typeof chosen.digest !== "string") {
          return { digest: manifest.digest, mediaType: manifest.mediaType, platforms, labels: {} };
        }
        imageManifest = await fetchManifest(state, repository, chosen.digest);
        if (isIndexMediaType(imageManifest.mediaType))
          throw new RegistryProtocolError(
            "registry-bad-json",
            `${state.registry}/${repository}:${reference}: nested image index`,
          );
      }
      const configDigest = (imageManifest.json.config as { digest?: unknown } | undefined)?.digest;
      if (typeof configDigest !== "string")
        throw new RegistryProtocolError(
          "registry-bad-json",
          `${state.registry}/${repository}:${reference}: manifest has no config`,
        );
      const config = await fetchConfig(state, repository, configDigest);
      if (
        platforms.length === 0 &&
        typeof config.os === "string" &&
        typeof config.architecture === "string"
      ) {
        platforms = [formatPlatform(config.os, config.architecture, config.variant)];
      }
      const labels: Record<string, string> = {};
      for (const [key, value] of Object.entries(config.config?.Labels ?? {}))
        if (typeof value === "string") labels[key] = value;
      const description: ImageDescription = {
        digest: manifest.digest,
        mediaType: manifest.mediaType,
        platforms,
        labels,
      };
      const created = typeof config.created === "string" ? new Date(config.created) : undefined;
      if (created && !Number.isNaN(created.getTime())) description.created = created;
      const revision = labels["org.opencontainers.image.revision"];
      if (revision) description.revision = revision;
      return description;
    },
  };
}

function formatPlatform(os: string, architecture: string, variant: unknown): string {
  return typeof variant === "string" && variant
    ? `${os}/${architecture}/${variant}`
    : `${os}/${architecture}`;
}
