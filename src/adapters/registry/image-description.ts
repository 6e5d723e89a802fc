import type { ImageDescription } from "../../app/ports.js";
import { RegistryProtocolError } from "./errors.js";
import {
  fetchBlob,
  fetchManifest,
  parseJsonObject,
  type FetchedManifest,
  type ImageConfigBlob,
  type ManifestContext,
} from "./manifest-fetch.js";
import { isIndexMediaType } from "./media-types.js";
import type { RegistryState } from "./transport.js";

/**
 * What an image is, from its manifest: an image index resolved to one platform's config for `created` and
 * labels, the platforms it lists. Config blobs are immutable and cached for the life of the client.
 */

export async function describe(
  ctx: ManifestContext,
  state: RegistryState,
  repository: string,
  reference: string,
): Promise<ImageDescription> {
  const manifest = await fetchManifest(ctx, state, repository, reference);
  let platforms: string[] = [];
  let imageManifest = manifest;
  if (isIndexMediaType(manifest.mediaType)) {
    const index = indexPlatforms(manifest);
    platforms = index.platforms;
    const chosen = index.chosen;
    if (!chosen || typeof chosen.digest !== "string") {
      return { digest: manifest.digest, mediaType: manifest.mediaType, platforms, labels: {} };
    }
    imageManifest = await fetchManifest(ctx, state, repository, chosen.digest);
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
  const config = await fetchConfig(ctx, state, repository, configDigest);
  if (platforms.length === 0 && typeof config.os === "string" && typeof config.architecture === "string") {
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
}

/** An image index's platforms, and the entry whose config gives created and labels: linux/amd64 when present. */
function indexPlatforms(manifest: FetchedManifest): {
  platforms: string[];
  chosen: { digest?: unknown } | undefined;
} {
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
  const platforms = [
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
  return { platforms, chosen };
}

/** Config blobs by digest; the promise is cached so concurrent describes share one fetch. */
function fetchConfig(
  ctx: ManifestContext,
  state: RegistryState,
  repository: string,
  digest: string,
): Promise<ImageConfigBlob> {
  const { configCache } = ctx;
  const key = `${state.registry}/${digest}`;
  let config = configCache.get(key);
  if (!config) {
    config = fetchConfigOnce(ctx, state, repository, digest);
    configCache.set(key, config);
    config.catch(() => configCache.delete(key));
  }
  return config;
}

async function fetchConfigOnce(
  ctx: ManifestContext,
  state: RegistryState,
  repository: string,
  digest: string,
): Promise<ImageConfigBlob> {
  const { limits } = ctx;
  const body = await fetchBlob(
    ctx,
    state,
    repository,
    digest,
    "config blob",
    "application/json, */*",
    limits.maxConfigBytes,
  );
  return parseJsonObject(state, repository, `config blob ${digest}`, body) as ImageConfigBlob;
}

function formatPlatform(os: string, architecture: string, variant: unknown): string {
  return typeof variant === "string" && variant
    ? `${os}/${architecture}/${variant}`
    : `${os}/${architecture}`;
}
