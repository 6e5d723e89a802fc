import { TAG_PATTERN } from "../../../../src/embedding.js";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { RegistryAuth, type AccessNeed, type RegistryAuthOptions } from "./registry-auth.js";
import {
  PlainHttpError,
  RegistryHttpError,
  methodNotAllowed,
  pageNotFound,
  sendRegistryError,
} from "./registry-errors.js";
import {
  EVENTS_MEDIA_TYPE,
  RegistryNotifier,
  type DistributionEvent,
  type NotificationEndpoint,
  type NotifierOptions,
} from "./registry-notifier.js";
import { MEDIA_TYPES, RegistryStore, sha256Digest, type StoredManifest } from "./registry-store.js";

export { EVENTS_MEDIA_TYPE, MEDIA_TYPES };
export type { DistributionEvent, NotificationEndpoint };

export interface EmbeddedRegistryOptions {
  auth?: RegistryAuthOptions;
  notifications?: NotificationEndpoint[];
  /** Retry/backoff of notification deliveries (defaults: 8 attempts from 100 ms). */
  notificationDelivery?: NotifierOptions;
  /** Clock in ms since the epoch, for token expiry and event timestamps; tests may move it. */
  now?: () => number;
  /** Answer DELETE requests (distribution `storage.delete.enabled`). Default true. */
  deleteEnabled?: boolean;
  /**
   * Send `Location` headers as paths (`/v2/...`) instead of absolute URLs as distribution does;
   * the spec allows both, so clients must resolve either. Default false.
   */
  relativeLocations?: boolean;
}

export interface EmbeddedRegistry {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** `127.0.0.1:PORT`, the registry part of an image reference. */
  host: string;
  close(): Promise<void>;
  addNotificationEndpoint(endpoint: NotificationEndpoint): void;
  /** Every request served so far (including `/token`). */
  requestCount(): number;
  /** Requests by route, e.g. `{"GET /v2/<name>/tags/list": 3, "PUT /v2/<name>/manifests/<ref>": 1}`. */
  requestCountsByRoute(): Record<string, number>;
  /** Repository names that hold anything, sorted. */
  repositories(): string[];
  /** Tags of one repository, sorted; empty when unknown. */
  tags(repository: string): string[];
  /** Resolves once every queued notification was delivered or given up on. */
  notificationsIdle(): Promise<void>;
}

/** OCI distribution `<name>` grammar: path components joined by `/`. */
const NAME_PATTERN = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*$/;
const DIGEST_PATTERN = /^[a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/;
const SHA256_PATTERN = /^sha256:[a-f0-9]{64}$/;
/** Encoded lengths of the algorithms distribution verifies; any other algorithm is invalid. */
const DIGEST_HEX_LENGTH: Record<string, number> = { sha256: 64, sha384: 96, sha512: 128 };

function isVerifiableDigest(digest: string): boolean {
  const [algorithm, encoded] = digest.split(":") as [string, string];
  const length = DIGEST_HEX_LENGTH[algorithm];
  return length !== undefined && encoded.length === length && /^[a-f0-9]+$/.test(encoded);
}
/** distribution's `maxManifestBodySize`. */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
const MAX_BLOB_BYTES = 512 * 1024 * 1024;

type Route =
  | { kind: "base" }
  | { kind: "token" }
  | { kind: "catalog" }
  | { kind: "tags"; name: string }
  | { kind: "manifest"; name: string; reference: string }
  | { kind: "blob"; name: string; digest: string }
  | { kind: "uploads"; name: string }
  | { kind: "upload"; name: string; uuid: string };

/** Matches the path in distribution's order: uploads before blobs, `<name>` may contain `/`. */
function matchRoute(pathname: string): Route | undefined {
  if (pathname === "/v2/" || pathname === "/v2") return { kind: "base" };
  if (pathname === "/token") return { kind: "token" };
  if (pathname === "/v2/_catalog") return { kind: "catalog" };
  let match: RegExpExecArray | null;
  if ((match = /^\/v2\/(.+)\/tags\/list$/.exec(pathname))) return { kind: "tags", name: match[1]! };
  if ((match = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(pathname))) {
    return { kind: "manifest", name: match[1]!, reference: match[2]! };
  }
  if ((match = /^\/v2\/(.+)\/blobs\/uploads\/?$/.exec(pathname))) return { kind: "uploads", name: match[1]! };
  if ((match = /^\/v2\/(.+)\/blobs\/uploads\/([^/]+)$/.exec(pathname))) {
    return { kind: "upload", name: match[1]!, uuid: match[2]! };
  }
  if ((match = /^\/v2\/(.+)\/blobs\/([^/]+)$/.exec(pathname)))
    return { kind: "blob", name: match[1]!, digest: match[2]! };
  return undefined;
}

function routeLabel(method: string, route: Route | undefined): string {
  const path = {
    base: "/v2/",
    token: "/token",
    catalog: "/v2/_catalog",
    tags: "/v2/<name>/tags/list",
    manifest: "/v2/<name>/manifests/<reference>",
    blob: "/v2/<name>/blobs/<digest>",
    uploads: "/v2/<name>/blobs/uploads/",
    upload: "/v2/<name>/blobs/uploads/<uuid>",
  }[route?.kind ?? "base"];
  return `${method} ${route ? path : "<unknown>"}`;
}

interface Upload {
  name: string;
  chunks: Buffer[];
  size: number;
}

/**
 * Starts an OCI distribution registry on 127.0.0.1 (ephemeral port) that behaves like CNCF
 * distribution v3: content-addressed blobs, manifests by tag and digest with distribution's
 * Accept negotiation, chunked and monolithic uploads, optional basic or token auth, and
 * distribution-format notifications after manifest pushes and deletes.
 */
export async function startEmbeddedRegistry(
  options: EmbeddedRegistryOptions = {},
): Promise<EmbeddedRegistry> {
  const now = options.now ?? Date.now;
  const store = new RegistryStore();
  const uploads = new Map<string, Upload>();
  const auth = options.auth ? new RegistryAuth(options.auth, now) : undefined;
  const notifier = new RegistryNotifier(options.notifications ?? [], options.notificationDelivery);
  const counts = new Map<string, number>();
  let total = 0;
  let baseUrl = "";
  let host = "";

  const server = createServer((req, res) => {
    total++;
    handle(req, res).catch((error: unknown) => {
      const isHead = req.method === "HEAD";
      if (error instanceof PlainHttpError) {
        if (!res.headersSent) {
          res.statusCode = error.status;
          res.setHeader("Content-Type", "text/plain; charset=utf-8");
          res.setHeader("Content-Length", Buffer.byteLength(error.text));
          res.end(isHead ? undefined : error.text);
        }
        req.resume();
        return;
      }
      if (error instanceof RegistryHttpError) {
        if (!res.headersSent) sendRegistryError(res, error, isHead);
        else res.destroy();
        // A rejected request may still be streaming its body; drain it so the socket stays usable.
        req.resume();
        return;
      }
      if (!res.headersSent) {
        res.statusCode = 500;
        res.setHeader("Content-Type", "application/json");
        res.end(
          isHead
            ? undefined
            : JSON.stringify({ errors: [{ code: "UNKNOWN", message: "unknown error", detail: null }] }),
        );
      } else {
        res.destroy();
      }
      req.resume();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", baseUrl);
    const route = matchRoute(url.pathname);
    const label = routeLabel(method, route);
    counts.set(label, (counts.get(label) ?? 0) + 1);
    res.setHeader("Docker-Distribution-API-Version", "registry/2.0");

    if (!route) throw pageNotFound();
    if (route.kind === "token") {
      if (!auth || options.auth?.kind !== "bearer") throw pageNotFound();
      const issued = auth.issueToken(req, url);
      return sendJson(res, issued.status, issued.body);
    }
    // Distribution's router only matches names in the grammar; a matching name may still be too long.
    if ("name" in route && !NAME_PATTERN.test(route.name)) throw pageNotFound();
    if ("name" in route && route.name.length > 255) {
      throw new RegistryHttpError("NAME_INVALID", { detail: { name: route.name } });
    }
    const actor = authorize(req, route, method);

    switch (route.kind) {
      case "base":
        if (method !== "GET" && method !== "HEAD") throw methodNotAllowed();
        return sendJson(res, 200, {}, method === "HEAD");
      case "catalog":
        return listCatalog(req, res, url);
      case "tags":
        if (method !== "GET") throw methodNotAllowed();
        return listTags(res, route.name, url);
      case "manifest":
        return manifest(req, res, route.name, route.reference, method, actor);
      case "blob":
        return blob(res, route.name, route.digest, method);
      case "uploads":
        if (method !== "POST") throw methodNotAllowed();
        return startUpload(req, res, route.name, url);
      case "upload":
        return continueUpload(req, res, route.name, route.uuid, url, method);
    }
  }

  function authorize(req: IncomingMessage, route: Route, method: string): string | undefined {
    if (!auth) return undefined;
    const read = method === "GET" || method === "HEAD";
    let need: AccessNeed;
    if ("name" in route) {
      need = {
        repository: route.name,
        actions: method === "DELETE" ? ["delete"] : read ? ["pull"] : ["pull", "push"],
      };
    } else if (route.kind === "catalog") {
      need = { repository: "catalog", actions: ["*"] };
    } else {
      need = { actions: [] };
    }
    return auth.authorize(req, need, baseUrl);
  }

  function listCatalog(req: IncomingMessage, res: ServerResponse, url: URL): void {
    if (req.method !== "GET") throw methodNotAllowed();
    const page = paginate(store.repositoryNames(), url);
    if (page.next !== undefined) res.setHeader("Link", nextLink("/v2/_catalog", page.limit, page.next));
    sendJson(res, 200, { repositories: page.items });
  }

  function listTags(res: ServerResponse, name: string, url: URL): void {
    const page = paginate(store.tags(name), url);
    // distribution answers n=0 with an empty list without looking the repository up.
    if (page.limit !== 0 && !store.hasRepository(name)) {
      throw new RegistryHttpError("NAME_UNKNOWN", { detail: { name } });
    }
    if (page.next !== undefined)
      res.setHeader("Link", nextLink(`/v2/${name}/tags/list`, page.limit, page.next));
    sendJson(res, 200, { name, tags: page.items });
  }

  async function manifest(
    req: IncomingMessage,
    res: ServerResponse,
    name: string,
    reference: string,
    method: string,
    actor: string | undefined,
  ): Promise<void> {
    const isDigest = DIGEST_PATTERN.test(reference);
    if (!isDigest && !TAG_PATTERN.test(reference)) throw pageNotFound();
    if (method === "GET" || method === "HEAD") return getManifest(req, res, name, reference, isDigest);
    if (method === "PUT") {
      const bytes = await readBody(req, MAX_MANIFEST_BYTES, "MANIFEST_INVALID");
      const contentType = req.headers["content-type"] ?? "";
      if (isDigest && sha256Digest(bytes) !== reference) {
        throw new RegistryHttpError("DIGEST_INVALID", { detail: { digest: reference } });
      }
      const stored = store.putManifest(name, contentType, bytes, isDigest ? undefined : reference);
      res.setHeader("Location", location(`/v2/${name}/manifests/${stored.digest}`));
      res.setHeader("Docker-Content-Digest", stored.digest);
      res.statusCode = 201;
      res.setHeader("Content-Length", 0);
      res.end();
      notify(req, "push", actor, {
        mediaType: stored.mediaType,
        size: stored.bytes.length,
        digest: stored.digest,
        length: stored.bytes.length,
        repository: name,
        url: `${baseUrl}/v2/${name}/manifests/${stored.digest}`,
        ...(isDigest ? {} : { tag: reference }),
      });
      return;
    }
    if (method === "DELETE") {
      if (options.deleteEnabled === false) throw new RegistryHttpError("UNSUPPORTED");
      if (isDigest) {
        const removedTags = store.deleteManifest(name, reference);
        if (removedTags === undefined) throw new RegistryHttpError("MANIFEST_UNKNOWN");
        // Like distribution: one event for the manifest, then one per tag that pointed at it.
        notify(req, "delete", actor, { digest: reference, repository: name });
        for (const tag of removedTags) notify(req, "delete", actor, { repository: name, tag });
      } else {
        if (!store.deleteTag(name, reference))
          throw new RegistryHttpError("MANIFEST_UNKNOWN", { detail: { tag: reference } });
        notify(req, "delete", actor, { repository: name, tag: reference });
      }
      res.statusCode = 202;
      res.setHeader("Content-Length", 0);
      res.end();
      return;
    }
    throw methodNotAllowed();
  }

  function getManifest(
    req: IncomingMessage,
    res: ServerResponse,
    name: string,
    reference: string,
    isDigest: boolean,
  ): void {
    let stored: StoredManifest | undefined = store.getManifest(name, reference);
    if (!stored)
      throw new RegistryHttpError("MANIFEST_UNKNOWN", {
        detail: isDigest ? { digest: reference } : { tag: reference },
      });
    const accepted = acceptedMediaTypes(req);
    // Negotiation exactly as distribution's GetManifest: OCI types need an explicit Accept, and a
    // Docker manifest list fetched by tag by a client that does not accept lists gets linux/amd64.
    if (stored.mediaType === MEDIA_TYPES.ociManifest && !accepted.has(MEDIA_TYPES.ociManifest)) {
      throw new RegistryHttpError("MANIFEST_UNKNOWN", {
        message: "OCI manifest found, but accept header does not support OCI manifests",
      });
    }
    if (stored.mediaType === MEDIA_TYPES.ociIndex && !accepted.has(MEDIA_TYPES.ociIndex)) {
      throw new RegistryHttpError("MANIFEST_UNKNOWN", {
        message: "OCI index found, but accept header does not support OCI indexes",
      });
    }
    if (
      !isDigest &&
      stored.mediaType === MEDIA_TYPES.dockerManifestList &&
      !accepted.has(MEDIA_TYPES.dockerManifestList)
    ) {
      const child = stored.children.find((entry) => entry.os === "linux" && entry.architecture === "amd64");
      const resolved = child ? store.getManifest(name, child.digest) : undefined;
      if (!resolved) throw new RegistryHttpError("MANIFEST_UNKNOWN");
      if (resolved.mediaType === MEDIA_TYPES.dockerManifest && !accepted.has(MEDIA_TYPES.dockerManifest)) {
        throw new RegistryHttpError("MANIFEST_INVALID", {
          message: "Schema 2 manifest not supported by client",
        });
      }
      stored = resolved;
    }
    const etag = `"${stored.digest}"`;
    const ifNoneMatch = req.headers["if-none-match"];
    if (ifNoneMatch === etag || ifNoneMatch === stored.digest) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.setHeader("Content-Type", stored.mediaType);
    res.setHeader("Content-Length", stored.bytes.length);
    res.setHeader("Docker-Content-Digest", stored.digest);
    res.setHeader("Etag", etag);
    res.statusCode = 200;
    res.end(req.method === "HEAD" ? undefined : stored.bytes);
  }

  function blob(res: ServerResponse, name: string, digest: string, method: string): void {
    if (!DIGEST_PATTERN.test(digest)) throw pageNotFound();
    if (!isVerifiableDigest(digest)) throw new RegistryHttpError("DIGEST_INVALID", { detail: { digest } });
    if (method === "GET" || method === "HEAD") {
      const bytes = store.getBlob(name, digest);
      if (!bytes) throw new RegistryHttpError("BLOB_UNKNOWN", { detail: { digest } });
      res.setHeader("Content-Type", "application/octet-stream");
      res.setHeader("Content-Length", bytes.length);
      res.setHeader("Docker-Content-Digest", digest);
      res.setHeader("Etag", `"${digest}"`);
      res.setHeader("Accept-Ranges", "bytes");
      res.statusCode = 200;
      res.end(method === "HEAD" ? undefined : bytes);
      return;
    }
    if (method === "DELETE") {
      if (options.deleteEnabled === false) throw new RegistryHttpError("UNSUPPORTED");
      if (!store.deleteBlob(name, digest))
        throw new RegistryHttpError("BLOB_UNKNOWN", { detail: { digest } });
      res.statusCode = 202;
      res.setHeader("Content-Length", 0);
      res.setHeader("Docker-Content-Digest", digest);
      res.end();
      return;
    }
    throw methodNotAllowed();
  }

  async function startUpload(
    req: IncomingMessage,
    res: ServerResponse,
    name: string,
    url: URL,
  ): Promise<void> {
    const mount = url.searchParams.get("mount");
    const from = url.searchParams.get("from");
    if (mount !== null && from !== null && DIGEST_PATTERN.test(mount) && NAME_PATTERN.test(from)) {
      if (store.mountBlob(name, from, mount)) return blobCreated(res, name, mount);
      // Mount failed: fall through to an ordinary upload session, as the spec allows.
    }
    const digest = url.searchParams.get("digest");
    if (digest !== null) {
      const bytes = await readBody(req, MAX_BLOB_BYTES, "BLOB_UPLOAD_INVALID");
      commitBlob(name, digest, bytes);
      return blobCreated(res, name, digest);
    }
    // A session start carries no content; discard whatever was sent so the connection stays usable.
    for await (const _chunk of req) void _chunk;
    const uuid = randomUUID();
    uploads.set(uuid, { name, chunks: [], size: 0 });
    uploadAccepted(res, name, uuid, 0);
  }

  async function continueUpload(
    req: IncomingMessage,
    res: ServerResponse,
    name: string,
    uuid: string,
    url: URL,
    method: string,
  ): Promise<void> {
    const upload = uploads.get(uuid);
    if (!upload || upload.name !== name)
      throw new RegistryHttpError("BLOB_UPLOAD_UNKNOWN", { detail: { uuid } });
    if (method === "GET") {
      res.statusCode = 204;
      res.setHeader("Location", location(`/v2/${name}/blobs/uploads/${uuid}`));
      res.setHeader("Range", `0-${Math.max(upload.size - 1, 0)}`);
      res.setHeader("Docker-Upload-UUID", uuid);
      res.end();
      return;
    }
    if (method === "DELETE") {
      uploads.delete(uuid);
      res.statusCode = 204;
      res.end();
      return;
    }
    if (method !== "PATCH" && method !== "PUT") throw methodNotAllowed();
    const contentRange = req.headers["content-range"];
    if (contentRange !== undefined) {
      const range = /^(?:bytes[ =])?(\d+)-(\d+)$/.exec(contentRange);
      // The spec requires chunks in order: the range must start where the upload stands.
      if (!range || Number(range[1]) !== upload.size || Number(range[2]) < Number(range[1])) {
        req.resume();
        res.statusCode = 416;
        res.setHeader("Location", location(`/v2/${name}/blobs/uploads/${uuid}`));
        res.setHeader("Range", `0-${Math.max(upload.size - 1, 0)}`);
        res.setHeader("Docker-Upload-UUID", uuid);
        res.setHeader("Content-Length", 0);
        res.end();
        return;
      }
    }
    const chunk = await readBody(req, MAX_BLOB_BYTES - upload.size, "BLOB_UPLOAD_INVALID");
    if (chunk.length > 0) {
      upload.chunks.push(chunk);
      upload.size += chunk.length;
    }
    if (method === "PATCH") return uploadAccepted(res, name, uuid, upload.size);
    const digest = url.searchParams.get("digest");
    if (digest === null)
      throw new RegistryHttpError("DIGEST_INVALID", { message: "digest missing from upload completion" });
    commitBlob(name, digest, Buffer.concat(upload.chunks));
    uploads.delete(uuid);
    blobCreated(res, name, digest);
  }

  function location(path: string): string {
    return options.relativeLocations ? path : `${baseUrl}${path}`;
  }

  function commitBlob(name: string, digest: string, bytes: Buffer): void {
    if (!SHA256_PATTERN.test(digest) || sha256Digest(bytes) !== digest) {
      throw new RegistryHttpError("DIGEST_INVALID", { detail: { digest } });
    }
    store.putBlob(name, digest, bytes);
  }

  function blobCreated(res: ServerResponse, name: string, digest: string): void {
    res.statusCode = 201;
    res.setHeader("Location", location(`/v2/${name}/blobs/${digest}`));
    res.setHeader("Docker-Content-Digest", digest);
    res.setHeader("Content-Length", 0);
    res.end();
  }

  function uploadAccepted(res: ServerResponse, name: string, uuid: string, size: number): void {
    res.statusCode = 202;
    res.setHeader("Location", location(`/v2/${name}/blobs/uploads/${uuid}`));
    // distribution reports `0-0` for an empty upload and `0-(size-1)` once bytes arrived.
    res.setHeader("Range", `0-${Math.max(size - 1, 0)}`);
    res.setHeader("Docker-Upload-UUID", uuid);
    res.setHeader("Content-Length", 0);
    res.end();
  }

  function notify(
    req: IncomingMessage,
    action: "push" | "delete",
    actor: string | undefined,
    target: DistributionEvent["target"],
  ): void {
    const event: DistributionEvent = {
      id: randomUUID(),
      timestamp: new Date(now()).toISOString(),
      action,
      target,
      request: {
        id: randomUUID(),
        addr: `${req.socket.remoteAddress ?? "127.0.0.1"}:${req.socket.remotePort ?? 0}`,
        host: req.headers.host ?? host,
        method: req.method ?? "",
        useragent: req.headers["user-agent"] ?? "",
      },
      actor: actor !== undefined ? { name: actor } : {},
      source: { addr: host, instanceID: notifier.instanceId },
    };
    notifier.enqueue([event]);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  host = `127.0.0.1:${port}`;
  baseUrl = `http://${host}`;

  return {
    url: baseUrl,
    host,
    async close() {
      await notifier.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
    addNotificationEndpoint(endpoint) {
      notifier.addEndpoint(endpoint);
    },
    requestCount: () => total,
    requestCountsByRoute: () => Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b))),
    repositories: () => store.repositoryNames(),
    tags: (repository) => store.tags(repository),
    notificationsIdle: () => notifier.idle(),
  };
}

/** `n`/`last` pagination shared by tags and catalog, lexically sorted input. */
function paginate(sorted: string[], url: URL): { items: string[]; limit: number; next?: string } {
  const last = url.searchParams.get("last") ?? "";
  const n = url.searchParams.get("n");
  let limit = -1;
  if (n !== null && n !== "") {
    if (!/^\d+$/.test(n)) throw new RegistryHttpError("PAGINATION_NUMBER_INVALID", { detail: { n } });
    limit = Number(n);
  }
  if (limit === 0) return { items: [], limit };
  const after = last === "" ? sorted : sorted.filter((item) => item > last);
  if (limit < 0 || after.length <= limit) return { items: after, limit };
  const items = after.slice(0, limit);
  return { items, limit, next: items[items.length - 1]! };
}

/** distribution's createLinkEntry: query keys sorted, so `last` comes before `n`. */
function nextLink(path: string, limit: number, last: string): string {
  const query = new URLSearchParams({ last, n: String(limit) });
  return `<${path}?${query.toString()}>; rel="next"`;
}

function acceptedMediaTypes(req: IncomingMessage): Set<string> {
  const accepted = new Set<string>();
  const raw = req.headersDistinct?.accept ?? [];
  for (const header of raw) {
    for (const part of header.split(",")) {
      const mediaType = part.split(";")[0]!.trim().toLowerCase();
      if (mediaType) accepted.add(mediaType);
    }
  }
  return accepted;
}

function sendJson(res: ServerResponse, status: number, body: object, isHead = false): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(isHead ? undefined : text);
}

/** Reads a request body, refusing more than `max` bytes (the rest is never buffered). */
async function readBody(
  req: IncomingMessage,
  max: number,
  code: "MANIFEST_INVALID" | "BLOB_UPLOAD_INVALID",
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new RegistryHttpError(code, { detail: `body larger than ${max} bytes` });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
