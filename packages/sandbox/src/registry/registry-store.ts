import { createHash } from "node:crypto";
import { RegistryHttpError } from "./registry-errors.js";

/** The four manifest media types the registry stores (OCI image spec and Docker v2 schema 2). */
export const MEDIA_TYPES = {
  ociIndex: "application/vnd.oci.image.index.v1+json",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  dockerManifestList: "application/vnd.docker.distribution.manifest.list.v2+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
} as const;

const MANIFEST_MEDIA_TYPES: ReadonlySet<string> = new Set(Object.values(MEDIA_TYPES));
const INDEX_MEDIA_TYPES: ReadonlySet<string> = new Set([
  MEDIA_TYPES.ociIndex,
  MEDIA_TYPES.dockerManifestList,
]);

export function sha256Digest(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

export interface StoredManifest {
  mediaType: string;
  bytes: Buffer;
  digest: string;
  /** Digests of the blobs (image manifest) or manifests (index) it references. */
  references: string[];
  /** Platform of every child manifest of an index, in order. */
  children: { digest: string; os?: string; architecture?: string }[];
}

interface Repository {
  /** Blobs linked into this repository (uploaded or mounted here); content lives in `blobs`. */
  blobs: Set<string>;
  manifests: Map<string, StoredManifest>;
  tags: Map<string, string>;
}

/**
 * In-memory, content-addressed storage: blob bytes are shared across repositories (keyed by
 * digest), and each repository links the blobs and manifests it may serve, as distribution does.
 */
export class RegistryStore {
  private readonly blobs = new Map<string, Buffer>();
  private readonly repositories = new Map<string, Repository>();

  repositoryNames(): string[] {
    return [...this.repositories.keys()].sort();
  }

  hasRepository(name: string): boolean {
    return this.repositories.has(name);
  }

  tags(name: string): string[] {
    return [...(this.repositories.get(name)?.tags.keys() ?? [])].sort();
  }

  putBlob(name: string, digest: string, bytes: Buffer): void {
    this.blobs.set(digest, bytes);
    this.repository(name).blobs.add(digest);
  }

  getBlob(name: string, digest: string): Buffer | undefined {
    const repository = this.repositories.get(name);
    if (!repository) return undefined;
    if (repository.blobs.has(digest)) return this.blobs.get(digest);
    // Manifests are blobs too in distribution's storage: GET /blobs/<manifest digest> works.
    return repository.manifests.get(digest)?.bytes;
  }

  /** Cross-repository mount: link an existing blob of `from` into `name`; false when absent. */
  mountBlob(name: string, from: string, digest: string): boolean {
    if (!this.repositories.get(from)?.blobs.has(digest) || !this.blobs.has(digest)) return false;
    this.repository(name).blobs.add(digest);
    return true;
  }

  deleteBlob(name: string, digest: string): boolean {
    return this.repositories.get(name)?.blobs.delete(digest) ?? false;
  }

  getManifest(name: string, reference: string): StoredManifest | undefined {
    const repository = this.repositories.get(name);
    if (!repository) return undefined;
    const digest = reference.startsWith("sha256:") ? reference : repository.tags.get(reference);
    return digest === undefined ? undefined : repository.manifests.get(digest);
  }

  /**
   * Validates and stores a manifest; every referenced blob (or child manifest of an index) must
   * already exist in this repository, else MANIFEST_BLOB_UNKNOWN like distribution.
   */
  putManifest(name: string, contentType: string, bytes: Buffer, tag: string | undefined): StoredManifest {
    const manifest = parseManifest(contentType, bytes);
    const repository = this.repositories.get(name);
    const missing = manifest.references.filter((digest) =>
      INDEX_MEDIA_TYPES.has(manifest.mediaType)
        ? !repository?.manifests.has(digest)
        : !repository?.blobs.has(digest) || !this.blobs.has(digest),
    );
    if (missing.length > 0) {
      throw new RegistryHttpError("MANIFEST_BLOB_UNKNOWN", { detail: missing[0] });
    }
    const target = this.repository(name);
    target.manifests.set(manifest.digest, manifest);
    if (tag !== undefined) target.tags.set(tag, manifest.digest);
    return manifest;
  }

  /** Deletes a manifest by digest (and every tag pointing at it); returns the tags removed. */
  deleteManifest(name: string, digest: string): string[] | undefined {
    const repository = this.repositories.get(name);
    if (!repository?.manifests.delete(digest)) return undefined;
    const removed: string[] = [];
    for (const [tag, target] of repository.tags) {
      if (target === digest) {
        repository.tags.delete(tag);
        removed.push(tag);
      }
    }
    return removed;
  }

  /** Removes a tag only (distribution v3 `DELETE /manifests/<tag>`); false when unknown. */
  deleteTag(name: string, tag: string): boolean {
    return this.repositories.get(name)?.tags.delete(tag) ?? false;
  }

  private repository(name: string): Repository {
    let repository = this.repositories.get(name);
    if (!repository) {
      repository = { blobs: new Set(), manifests: new Map(), tags: new Map() };
      this.repositories.set(name, repository);
    }
    return repository;
  }
}

interface Descriptor {
  mediaType?: unknown;
  digest?: unknown;
  size?: unknown;
  platform?: { os?: unknown; architecture?: unknown };
}

/** Parses a manifest body the way distribution's UnmarshalManifest does: by Content-Type. */
export function parseManifest(contentType: string, bytes: Buffer): StoredManifest {
  const mediaType = contentType.split(";")[0]!.trim();
  let body: {
    mediaType?: unknown;
    schemaVersion?: unknown;
    config?: Descriptor;
    layers?: unknown;
    manifests?: unknown;
  };
  try {
    body = JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    throw new RegistryHttpError("MANIFEST_INVALID", { detail: `invalid JSON: ${(error as Error).message}` });
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new RegistryHttpError("MANIFEST_INVALID", { detail: "manifest must be a JSON object" });
  }
  // Distribution picks the parser by Content-Type alone; with schema 1 gone there is no default.
  const effectiveType = mediaType;
  if (!MANIFEST_MEDIA_TYPES.has(effectiveType)) {
    throw new RegistryHttpError("MANIFEST_INVALID", {
      detail: `unsupported manifest media type and no default available: ${JSON.stringify(effectiveType)}`,
    });
  }
  if (body.mediaType !== undefined && body.mediaType !== effectiveType) {
    throw new RegistryHttpError("MANIFEST_INVALID", {
      detail: `mediaType in manifest should be '${effectiveType}' not '${String(body.mediaType)}'`,
    });
  }
  if (body.schemaVersion !== 2) {
    throw new RegistryHttpError("MANIFEST_INVALID", { detail: "schemaVersion must be 2" });
  }
  const digest = sha256Digest(bytes);
  if (INDEX_MEDIA_TYPES.has(effectiveType)) {
    const manifests = descriptors(body.manifests, "manifests");
    return {
      mediaType: effectiveType,
      bytes,
      digest,
      references: manifests.map((descriptor) => descriptor.digest as string),
      children: manifests.map((descriptor) => ({
        digest: descriptor.digest as string,
        ...(typeof descriptor.platform?.os === "string" ? { os: descriptor.platform.os } : {}),
        ...(typeof descriptor.platform?.architecture === "string"
          ? { architecture: descriptor.platform.architecture }
          : {}),
      })),
    };
  }
  const [config] = descriptors([body.config], "config");
  const layers = descriptors(body.layers ?? [], "layers");
  return {
    mediaType: effectiveType,
    bytes,
    digest,
    references: [config!, ...layers].map((descriptor) => descriptor.digest as string),
    children: [],
  };
}

function descriptors(value: unknown, field: string): Descriptor[] {
  if (!Array.isArray(value))
    throw new RegistryHttpError("MANIFEST_INVALID", { detail: `${field} must be an array` });
  return value.map((descriptor: Descriptor) => {
    if (typeof descriptor !== "object" || descriptor === null || typeof descriptor.digest !== "string") {
      throw new RegistryHttpError("MANIFEST_INVALID", { detail: `${field}: descriptor without digest` });
    }
    if (!/^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/.test(descriptor.digest)) {
      throw new RegistryHttpError("DIGEST_INVALID", { detail: descriptor.digest });
    }
    return descriptor;
  });
}
