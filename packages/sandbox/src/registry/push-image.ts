import { createHash } from "node:crypto";

/**
 * Pushes a small image over the OCI distribution HTTP API (no Docker): a layer and a config
 * blob (POST then monolithic PUT), then a manifest, or an OCI index of one manifest per platform.
 * Blob contents derive from repository, tag, platform and `content`, so the same call always
 * yields the same digests. Used by tests, the sandbox and the bench.
 */

export interface PushImageOptions {
  /** `os/arch[/variant]`; several → an OCI index. Default `linux/amd64`. */
  platforms?: string[];
  /** Config `created`; default 2024-01-01T00:00:00Z (deterministic). */
  created?: Date;
  labels?: Record<string, string>;
  auth?: { username: string; password: string };
  /** Extra seed for the layer bytes: different content → different digests. */
  content?: string;
  /** Force an index even for one platform. */
  index?: boolean;
  fetch?: typeof fetch;
}

export interface PushedManifest {
  platform: string;
  digest: string;
  configDigest: string;
}

export interface PushImageResult {
  /** Digest of what the tag points at (the index when several platforms). */
  digest: string;
  mediaType: string;
  manifests?: PushedManifest[];
}

const OCI_INDEX = "application/vnd.oci.image.index.v1+json";
const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
const OCI_LAYER = "application/vnd.oci.image.layer.v1.tar";
const DEFAULT_CREATED = new Date("2024-01-01T00:00:00Z");

export class PushImageError extends Error {}

export async function pushImage(
  baseUrl: string,
  repository: string,
  tag: string,
  options: PushImageOptions = {},
): Promise<PushImageResult> {
  const session = new PushSession(baseUrl.replace(/\/+$/, ""), repository, options);
  const platforms = options.platforms && options.platforms.length > 0 ? options.platforms : ["linux/amd64"];
  const manifests: PushedManifest[] = [];
  const entries: { bytes: Buffer; digest: string; platform: string }[] = [];
  for (const platform of platforms) {
    const [os, architecture, variant] = platform.split("/");
    if (!os || !architecture)
      throw new PushImageError(`platform ${JSON.stringify(platform)} is not os/arch[/variant]`);
    const layer = Buffer.from(
      `ferry test layer\n${repository}:${tag}\n${platform}\n${options.content ?? ""}\n`,
    );
    const layerDigest = digestOf(layer);
    const config = Buffer.from(
      JSON.stringify({
        created: (options.created ?? DEFAULT_CREATED).toISOString(),
        architecture,
        os,
        ...(variant ? { variant } : {}),
        config: { Labels: options.labels ?? {} },
        rootfs: { type: "layers", diff_ids: [layerDigest] },
      }),
    );
    await session.uploadBlob(layer);
    await session.uploadBlob(config);
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: { mediaType: OCI_CONFIG, digest: digestOf(config), size: config.length },
        layers: [{ mediaType: OCI_LAYER, digest: layerDigest, size: layer.length }],
      }),
    );
    entries.push({ bytes: manifest, digest: digestOf(manifest), platform });
    manifests.push({ platform, digest: digestOf(manifest), configDigest: digestOf(config) });
  }
  if (entries.length === 1 && !options.index) {
    const digest = await session.putManifest(tag, entries[0]!.bytes, OCI_MANIFEST);
    return { digest, mediaType: OCI_MANIFEST };
  }
  for (const entry of entries) await session.putManifest(entry.digest, entry.bytes, OCI_MANIFEST);
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_INDEX,
      manifests: entries.map((entry) => {
        const [os, architecture, variant] = entry.platform.split("/");
        return {
          mediaType: OCI_MANIFEST,
          digest: entry.digest,
          size: entry.bytes.length,
          platform: { os, architecture, ...(variant ? { variant } : {}) },
        };
      }),
    }),
  );
  const digest = await session.putManifest(tag, index, OCI_INDEX);
  return { digest, mediaType: OCI_INDEX, manifests };
}

function digestOf(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** Requests with Basic or Bearer-challenge auth, scope `pull,push` on the repository. */
export class PushSession {
  private authorization: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(
    private readonly baseUrl: string,
    private readonly repository: string,
    private readonly options: PushImageOptions,
  ) {
    this.fetchImpl = options.fetch ?? fetch;
  }

  async uploadBlob(bytes: Buffer): Promise<void> {
    const digest = digestOf(bytes);
    const exists = await this.send("HEAD", `/v2/${this.repository}/blobs/${digest}`);
    if (exists.status === 200) return;
    const started = await this.send("POST", `/v2/${this.repository}/blobs/uploads/`);
    if (started.status !== 202) throw new PushImageError(`starting upload answered HTTP ${started.status}`);
    const location = started.headers.get("location");
    if (!location) throw new PushImageError("upload started without a Location");
    const url = new URL(location, `${this.baseUrl}/`);
    url.searchParams.set("digest", digest);
    const put = await this.send("PUT", url.href, bytes, "application/octet-stream");
    if (put.status !== 201)
      throw new PushImageError(`blob upload answered HTTP ${put.status}: ${await put.text()}`);
  }

  async putManifest(reference: string, bytes: Buffer, mediaType: string): Promise<string> {
    const response = await this.send(
      "PUT",
      `/v2/${this.repository}/manifests/${reference}`,
      bytes,
      mediaType,
    );
    if (response.status !== 201)
      throw new PushImageError(`manifest PUT answered HTTP ${response.status}: ${await response.text()}`);
    return digestOf(bytes);
  }

  private async send(
    method: string,
    pathOrUrl: string,
    body?: Buffer,
    contentType?: string,
  ): Promise<Response> {
    const url = pathOrUrl.startsWith("http") ? pathOrUrl : `${this.baseUrl}${pathOrUrl}`;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const headers: Record<string, string> = {};
      if (contentType) headers["content-type"] = contentType;
      if (this.authorization) headers.authorization = this.authorization;
      const response = await this.fetchImpl(url, { method, headers, ...(body ? { body } : {}) });
      if (response.status !== 401 || attempt > 0) return response;
      await response.arrayBuffer();
      await this.authenticate(response.headers.get("www-authenticate") ?? "");
    }
    throw new PushImageError("unreachable");
  }

  private async authenticate(challenge: string): Promise<void> {
    const auth = this.options.auth;
    if (!auth) throw new PushImageError(`registry requires credentials to push ${this.repository}`);
    const basic = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`;
    if (/^\s*basic/i.test(challenge)) {
      this.authorization = basic;
      return;
    }
    const realm = /realm="([^"]+)"/i.exec(challenge)?.[1];
    const service = /service="([^"]+)"/i.exec(challenge)?.[1];
    if (!realm) throw new PushImageError("Bearer challenge without a realm");
    const url = new URL(realm);
    if (service) url.searchParams.set("service", service);
    url.searchParams.set("scope", `repository:${this.repository}:pull,push`);
    const response = await this.fetchImpl(url, { headers: { authorization: basic } });
    if (response.status !== 200) throw new PushImageError(`token endpoint answered HTTP ${response.status}`);
    const body = (await response.json()) as { token?: string; access_token?: string };
    const token = body.token ?? body.access_token;
    if (!token) throw new PushImageError("token endpoint answered no token");
    this.authorization = `Bearer ${token}`;
  }
}
