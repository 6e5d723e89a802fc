import { createHash } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  EVENTS_MEDIA_TYPE,
  MEDIA_TYPES,
  startEmbeddedRegistry,
  type EmbeddedRegistry,
} from "../../../packages/sandbox/src/registry/embedded-registry.js";

const digestOf = (bytes: Buffer | string) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
const ALL_MANIFEST_TYPES = Object.values(MEDIA_TYPES).join(", ");

const started: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((item) => item.close()));
});

async function registry(options?: Parameters<typeof startEmbeddedRegistry>[0]): Promise<EmbeddedRegistry> {
  const instance = await startEmbeddedRegistry(options);
  started.push(instance);
  return instance;
}

async function pushBlob(
  base: string,
  name: string,
  content: string | Buffer,
  headers: Record<string, string> = {},
) {
  const bytes = Buffer.from(content);
  const digest = digestOf(bytes);
  const response = await fetch(`${base}/v2/${name}/blobs/uploads/?digest=${digest}`, {
    method: "POST",
    headers: { "Content-Type": "application/octet-stream", ...headers },
    body: bytes,
  });
  expect(response.status).toBe(201);
  return { digest, size: bytes.length };
}

function imageManifest(
  config: { digest: string; size: number },
  layers: { digest: string; size: number }[],
  mediaType: string = MEDIA_TYPES.ociManifest,
) {
  const docker = mediaType === MEDIA_TYPES.dockerManifest;
  return JSON.stringify({
    schemaVersion: 2,
    mediaType,
    config: {
      mediaType: docker
        ? "application/vnd.docker.container.image.v1+json"
        : "application/vnd.oci.image.config.v1+json",
      ...config,
    },
    layers: layers.map((layer) => ({
      mediaType: docker
        ? "application/vnd.docker.image.rootfs.diff.tar.gzip"
        : "application/vnd.oci.image.layer.v1.tar+gzip",
      ...layer,
    })),
  });
}

async function pushImage(
  base: string,
  name: string,
  tag: string,
  options: { mediaType?: string; config?: string; headers?: Record<string, string> } = {},
) {
  const headers = options.headers ?? {};
  const config = await pushBlob(
    base,
    name,
    options.config ?? JSON.stringify({ architecture: "amd64", os: "linux", created: "2024-01-01T00:00:00Z" }),
    headers,
  );
  const layer = await pushBlob(base, name, `layer of ${name}:${tag}`, headers);
  const mediaType = options.mediaType ?? MEDIA_TYPES.ociManifest;
  const body = imageManifest(config, [layer], mediaType);
  const response = await fetch(`${base}/v2/${name}/manifests/${tag}`, {
    method: "PUT",
    headers: { "Content-Type": mediaType, ...headers },
    body,
  });
  expect(response.status).toBe(201);
  return { digest: digestOf(body), body, size: Buffer.byteLength(body), mediaType };
}

describe("embedded registry: base and errors", () => {
  it("answers GET /v2/ with the distribution API version header", async () => {
    const reg = await registry();
    const response = await fetch(`${reg.url}/v2/`);
    expect(response.status).toBe(200);
    expect(response.headers.get("docker-distribution-api-version")).toBe("registry/2.0");
    expect(reg.url).toBe(`http://${reg.host}`);
    expect(reg.host).toMatch(/^127\.0\.0\.1:\d+$/);
  });

  it("answers a name outside the grammar with the router's plain 404, as distribution does", async () => {
    const reg = await registry();
    const response = await fetch(`${reg.url}/v2/Acme/Shop/tags/list`);
    expect(response.status).toBe(404);
    expect(await response.text()).toBe("404 page not found\n");
    expect((await fetch(`${reg.url}/v2/acme/shop/manifests/-not-a-tag`)).status).toBe(404);
    expect((await fetch(`${reg.url}/v2/acme/shop/whatever`)).status).toBe(404);
  });

  it("rejects a name longer than 255 characters with NAME_INVALID in the spec's error format", async () => {
    const reg = await registry();
    const response = await fetch(`${reg.url}/v2/${"a".repeat(200)}/${"b".repeat(60)}/tags/list`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expect(body.errors[0]).toMatchObject({ code: "NAME_INVALID", message: expect.any(String) });
    expect(body.errors[0]).toHaveProperty("detail");
  });

  it("answers a method the route does not serve with 405", async () => {
    const reg = await registry();
    expect((await fetch(`${reg.url}/v2/acme/shop/tags/list`, { method: "POST" })).status).toBe(405);
  });

  it("answers NAME_UNKNOWN for the tags of a repository that does not exist", async () => {
    const reg = await registry();
    const response = await fetch(`${reg.url}/v2/acme/nothing/tags/list`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).errors[0].code).toBe("NAME_UNKNOWN");
  });
});

describe("embedded registry: blobs and uploads", () => {
  it("stores a monolithic upload and serves it by digest with Docker-Content-Digest", async () => {
    const reg = await registry();
    const { digest } = await pushBlob(reg.url, "acme/shop", "hello blob");
    const head = await fetch(`${reg.url}/v2/acme/shop/blobs/${digest}`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("docker-content-digest")).toBe(digest);
    expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength("hello blob")));
    const get = await fetch(`${reg.url}/v2/acme/shop/blobs/${digest}`);
    expect(await get.text()).toBe("hello blob");
  });

  it("assembles PATCH chunks and verifies the digest on the final PUT", async () => {
    const reg = await registry();
    const start = await fetch(`${reg.url}/v2/acme/shop/blobs/uploads/`, { method: "POST" });
    expect(start.status).toBe(202);
    const location = start.headers.get("location")!;
    expect(location).toMatch(new RegExp(`^${reg.url}/v2/acme/shop/blobs/uploads/[0-9a-f-]+$`));
    expect(start.headers.get("docker-upload-uuid")).toBeTruthy();

    const first = await fetch(location, {
      method: "PATCH",
      headers: { "Content-Type": "application/octet-stream", "Content-Range": "0-4" },
      body: "hello",
    });
    expect(first.status).toBe(202);
    expect(first.headers.get("range")).toBe("0-4");
    const second = await fetch(first.headers.get("location")!, {
      method: "PATCH",
      headers: { "Content-Range": "5-10" },
      body: " world",
    });
    expect(second.headers.get("range")).toBe("0-10");

    const digest = digestOf("hello world");
    const done = await fetch(`${second.headers.get("location")}?digest=${digest}`, { method: "PUT" });
    expect(done.status).toBe(201);
    expect(done.headers.get("location")).toBe(`${reg.url}/v2/acme/shop/blobs/${digest}`);
    expect(done.headers.get("docker-content-digest")).toBe(digest);
    expect(await (await fetch(`${reg.url}/v2/acme/shop/blobs/${digest}`)).text()).toBe("hello world");
  });

  it("refuses a chunk whose Content-Range does not continue the upload with 416", async () => {
    const reg = await registry();
    const start = await fetch(`${reg.url}/v2/acme/shop/blobs/uploads/`, { method: "POST" });
    const response = await fetch(start.headers.get("location")!, {
      method: "PATCH",
      headers: { "Content-Range": "3-5" },
      body: "abc",
    });
    expect(response.status).toBe(416);
  });

  it("answers DIGEST_INVALID when the uploaded bytes do not match the digest", async () => {
    const reg = await registry();
    const response = await fetch(
      `${reg.url}/v2/acme/shop/blobs/uploads/?digest=${digestOf("something else")}`,
      { method: "POST", body: "content" },
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).errors[0].code).toBe("DIGEST_INVALID");
    expect(reg.repositories()).toEqual([]);
  });

  it("answers BLOB_UNKNOWN for a blob that is not in the repository, even if another repository has it", async () => {
    const reg = await registry();
    const { digest } = await pushBlob(reg.url, "acme/one", "shared");
    const response = await fetch(`${reg.url}/v2/acme/two/blobs/${digest}`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).errors[0].code).toBe("BLOB_UNKNOWN");
  });

  it("mounts a blob from another repository without re-uploading it", async () => {
    const reg = await registry();
    const { digest } = await pushBlob(reg.url, "acme/one", "shared");
    const response = await fetch(`${reg.url}/v2/acme/two/blobs/uploads/?mount=${digest}&from=acme/one`, {
      method: "POST",
    });
    expect(response.status).toBe(201);
    expect((await fetch(`${reg.url}/v2/acme/two/blobs/${digest}`, { method: "HEAD" })).status).toBe(200);
  });

  it("answers BLOB_UPLOAD_UNKNOWN for an unknown upload session", async () => {
    const reg = await registry();
    const response = await fetch(`${reg.url}/v2/acme/shop/blobs/uploads/not-a-session`, {
      method: "PATCH",
      body: "x",
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).errors[0].code).toBe("BLOB_UPLOAD_UNKNOWN");
  });

  it("answers DIGEST_INVALID for a blob digest of the wrong length", async () => {
    const reg = await registry();
    const response = await fetch(`${reg.url}/v2/acme/shop/blobs/sha256:abc`);
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).errors[0].code).toBe("DIGEST_INVALID");
  });

  it("deletes a blob so that it is no longer served", async () => {
    const reg = await registry();
    const { digest } = await pushBlob(reg.url, "acme/shop", "to delete");
    expect((await fetch(`${reg.url}/v2/acme/shop/blobs/${digest}`, { method: "DELETE" })).status).toBe(202);
    expect((await fetch(`${reg.url}/v2/acme/shop/blobs/${digest}`, { method: "HEAD" })).status).toBe(404);
  });
});

describe("embedded registry: manifests", () => {
  it("serves a pushed manifest by tag and by digest with its media type and digest", async () => {
    const reg = await registry();
    const pushed = await pushImage(reg.url, "acme/shop", "1.8.0", { mediaType: MEDIA_TYPES.dockerManifest });
    for (const reference of ["1.8.0", pushed.digest]) {
      const response = await fetch(`${reg.url}/v2/acme/shop/manifests/${reference}`, {
        headers: { Accept: MEDIA_TYPES.dockerManifest },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe(MEDIA_TYPES.dockerManifest);
      expect(response.headers.get("docker-content-digest")).toBe(pushed.digest);
      expect(await response.text()).toBe(pushed.body);
    }
  });

  it("answers the PUT with 201, the digest and a Location by digest", async () => {
    const reg = await registry();
    const config = await pushBlob(reg.url, "acme/shop", "{}");
    const body = imageManifest(config, []);
    const response = await fetch(`${reg.url}/v2/acme/shop/manifests/latest`, {
      method: "PUT",
      headers: { "Content-Type": MEDIA_TYPES.ociManifest },
      body,
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("docker-content-digest")).toBe(digestOf(body));
    expect(response.headers.get("location")).toBe(`${reg.url}/v2/acme/shop/manifests/${digestOf(body)}`);
  });

  it("sends Location as a path when asked to, which the spec also allows", async () => {
    const reg = await registry({ relativeLocations: true });
    const start = await fetch(`${reg.url}/v2/acme/shop/blobs/uploads/`, { method: "POST" });
    expect(start.headers.get("location")).toMatch(/^\/v2\/acme\/shop\/blobs\/uploads\/[0-9a-f-]+$/);
  });

  it("refuses a manifest PUT without a manifest Content-Type, as distribution does without schema 1", async () => {
    const reg = await registry();
    const config = await pushBlob(reg.url, "acme/shop", "{}");
    for (const headers of [{}, { "Content-Type": "application/json" }] as Record<string, string>[]) {
      const response = await fetch(`${reg.url}/v2/acme/shop/manifests/1.0.0`, {
        method: "PUT",
        headers,
        body: imageManifest(config, []),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as any).errors[0].code).toBe("MANIFEST_INVALID");
    }
  });

  it("answers HEAD with headers only", async () => {
    const reg = await registry();
    const pushed = await pushImage(reg.url, "acme/shop", "1.0.0");
    const response = await fetch(`${reg.url}/v2/acme/shop/manifests/1.0.0`, {
      method: "HEAD",
      headers: { Accept: ALL_MANIFEST_TYPES },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("docker-content-digest")).toBe(pushed.digest);
    expect(response.headers.get("content-length")).toBe(String(pushed.size));
    expect(await response.text()).toBe("");
  });

  it("refuses a manifest that references a blob the repository does not have", async () => {
    const reg = await registry();
    const config = await pushBlob(reg.url, "acme/shop", "{}");
    const missing = { digest: digestOf("never uploaded"), size: 14 };
    const response = await fetch(`${reg.url}/v2/acme/shop/manifests/1.0.0`, {
      method: "PUT",
      headers: { "Content-Type": MEDIA_TYPES.ociManifest },
      body: imageManifest(config, [missing]),
    });
    expect(response.status).toBe(400);
    const error = ((await response.json()) as any).errors[0];
    expect(error.code).toBe("MANIFEST_BLOB_UNKNOWN");
    expect(error.detail).toBe(missing.digest);
    expect(reg.tags("acme/shop")).toEqual([]);
  });

  it("refuses an index that references a manifest the repository does not have", async () => {
    const reg = await registry();
    const body = JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.ociIndex,
      manifests: [
        {
          mediaType: MEDIA_TYPES.ociManifest,
          digest: digestOf("nope"),
          size: 4,
          platform: { os: "linux", architecture: "amd64" },
        },
      ],
    });
    const response = await fetch(`${reg.url}/v2/acme/shop/manifests/1.0.0`, {
      method: "PUT",
      headers: { "Content-Type": MEDIA_TYPES.ociIndex },
      body,
    });
    expect(((await response.json()) as any).errors[0].code).toBe("MANIFEST_BLOB_UNKNOWN");
  });

  it("refuses a PUT by digest whose body has another digest", async () => {
    const reg = await registry();
    const config = await pushBlob(reg.url, "acme/shop", "{}");
    const response = await fetch(`${reg.url}/v2/acme/shop/manifests/${digestOf("other")}`, {
      method: "PUT",
      headers: { "Content-Type": MEDIA_TYPES.ociManifest },
      body: imageManifest(config, []),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).errors[0].code).toBe("DIGEST_INVALID");
  });

  it("refuses malformed manifests with MANIFEST_INVALID", async () => {
    const reg = await registry();
    for (const body of [
      "{not json",
      "[]",
      JSON.stringify({ schemaVersion: 1, mediaType: MEDIA_TYPES.ociManifest }),
    ]) {
      const response = await fetch(`${reg.url}/v2/acme/shop/manifests/bad`, {
        method: "PUT",
        headers: { "Content-Type": MEDIA_TYPES.ociManifest },
        body,
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as any).errors[0].code).toBe("MANIFEST_INVALID");
    }
  });

  it("stores all four manifest media types", async () => {
    const reg = await registry();
    const oci = await pushImage(reg.url, "acme/shop", "oci", { mediaType: MEDIA_TYPES.ociManifest });
    const docker = await pushImage(reg.url, "acme/shop", "docker", {
      mediaType: MEDIA_TYPES.dockerManifest,
      config: '{"os":"linux"}',
    });
    const platform = { os: "linux", architecture: "amd64" };
    const index = JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.ociIndex,
      manifests: [{ mediaType: oci.mediaType, digest: oci.digest, size: oci.size, platform }],
    });
    const list = JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.dockerManifestList,
      manifests: [{ mediaType: docker.mediaType, digest: docker.digest, size: docker.size, platform }],
    });
    for (const [tag, mediaType, body] of [
      ["index", MEDIA_TYPES.ociIndex, index],
      ["list", MEDIA_TYPES.dockerManifestList, list],
    ] as const) {
      expect(
        (
          await fetch(`${reg.url}/v2/acme/shop/manifests/${tag}`, {
            method: "PUT",
            headers: { "Content-Type": mediaType },
            body,
          })
        ).status,
      ).toBe(201);
      const response = await fetch(`${reg.url}/v2/acme/shop/manifests/${tag}`, {
        headers: { Accept: ALL_MANIFEST_TYPES },
      });
      expect(response.headers.get("content-type")).toBe(mediaType);
      expect(response.headers.get("docker-content-digest")).toBe(digestOf(body));
    }
    expect(reg.tags("acme/shop")).toEqual(["docker", "index", "list", "oci"]);
  });

  it("deletes a manifest by digest together with its tags, and a tag alone", async () => {
    const reg = await registry();
    const one = await pushImage(reg.url, "acme/shop", "1.0.0");
    await fetch(`${reg.url}/v2/acme/shop/manifests/also-one`, {
      method: "PUT",
      headers: { "Content-Type": MEDIA_TYPES.ociManifest },
      body: one.body,
    });
    await pushImage(reg.url, "acme/shop", "2.0.0", { config: '{"v":2}' });
    expect((await fetch(`${reg.url}/v2/acme/shop/manifests/2.0.0`, { method: "DELETE" })).status).toBe(202);
    expect(reg.tags("acme/shop")).toEqual(["1.0.0", "also-one"]);
    expect(
      (await fetch(`${reg.url}/v2/acme/shop/manifests/${one.digest}`, { method: "DELETE" })).status,
    ).toBe(202);
    expect(reg.tags("acme/shop")).toEqual([]);
    const gone = await fetch(`${reg.url}/v2/acme/shop/manifests/${one.digest}`, {
      headers: { Accept: ALL_MANIFEST_TYPES },
    });
    expect(gone.status).toBe(404);
  });
});

describe("embedded registry: content negotiation like distribution", () => {
  it("hides an OCI manifest from a client whose Accept does not include the OCI type", async () => {
    const reg = await registry();
    await pushImage(reg.url, "acme/shop", "1.0.0", { mediaType: MEDIA_TYPES.ociManifest });
    for (const accept of [undefined, MEDIA_TYPES.dockerManifest, "*/*"]) {
      const response = await fetch(`${reg.url}/v2/acme/shop/manifests/1.0.0`, {
        headers: accept ? { Accept: accept } : {},
      });
      expect(response.status).toBe(404);
      expect(((await response.json()) as any).errors[0].code).toBe("MANIFEST_UNKNOWN");
    }
    const ok = await fetch(`${reg.url}/v2/acme/shop/manifests/1.0.0`, {
      headers: { Accept: `${MEDIA_TYPES.dockerManifest}, ${MEDIA_TYPES.ociManifest};q=0.5` },
    });
    expect(ok.status).toBe(200);
  });

  it("hides an OCI index from a client that does not accept OCI indexes", async () => {
    const reg = await registry();
    const child = await pushImage(reg.url, "acme/shop", "child");
    const body = JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.ociIndex,
      manifests: [
        {
          mediaType: child.mediaType,
          digest: child.digest,
          size: child.size,
          platform: { os: "linux", architecture: "arm64" },
        },
      ],
    });
    await fetch(`${reg.url}/v2/acme/shop/manifests/multi`, {
      method: "PUT",
      headers: { "Content-Type": MEDIA_TYPES.ociIndex },
      body,
    });
    expect(
      (
        await fetch(`${reg.url}/v2/acme/shop/manifests/multi`, {
          headers: { Accept: MEDIA_TYPES.ociManifest },
        })
      ).status,
    ).toBe(404);
    expect(
      (await fetch(`${reg.url}/v2/acme/shop/manifests/multi`, { headers: { Accept: MEDIA_TYPES.ociIndex } }))
        .status,
    ).toBe(200);
  });

  it("answers a Docker manifest list fetched by tag with the linux/amd64 manifest when lists are not accepted", async () => {
    const reg = await registry();
    const amd64 = await pushImage(reg.url, "acme/shop", "amd64", { mediaType: MEDIA_TYPES.dockerManifest });
    const body = JSON.stringify({
      schemaVersion: 2,
      mediaType: MEDIA_TYPES.dockerManifestList,
      manifests: [
        {
          mediaType: amd64.mediaType,
          digest: amd64.digest,
          size: amd64.size,
          platform: { os: "linux", architecture: "amd64" },
        },
      ],
    });
    await fetch(`${reg.url}/v2/acme/shop/manifests/multi`, {
      method: "PUT",
      headers: { "Content-Type": MEDIA_TYPES.dockerManifestList },
      body,
    });
    const response = await fetch(`${reg.url}/v2/acme/shop/manifests/multi`, {
      headers: { Accept: MEDIA_TYPES.dockerManifest },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("docker-content-digest")).toBe(amd64.digest);
  });
});

describe("embedded registry: tag listing", () => {
  it("lists tags lexically and pages them with n, last and a Link header", async () => {
    const reg = await registry();
    const first = await pushImage(reg.url, "acme/shop", "b");
    for (const tag of ["c", "a", "1.10.0", "1.9.0"]) {
      await fetch(`${reg.url}/v2/acme/shop/manifests/${tag}`, {
        method: "PUT",
        headers: { "Content-Type": MEDIA_TYPES.ociManifest },
        body: first.body,
      });
    }
    const all = (await (await fetch(`${reg.url}/v2/acme/shop/tags/list`)).json()) as any;
    expect(all).toEqual({ name: "acme/shop", tags: ["1.10.0", "1.9.0", "a", "b", "c"] });

    const pages: string[][] = [];
    let next: string | null = "/v2/acme/shop/tags/list?n=2";
    while (next) {
      const response: Response = await fetch(`${reg.url}${next}`);
      pages.push(((await response.json()) as any).tags);
      const link = response.headers.get("link");
      next = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1]! : null;
    }
    expect(pages).toEqual([["1.10.0", "1.9.0"], ["a", "b"], ["c"]]);
  });

  it("puts last before n in the next link, as distribution does", async () => {
    const reg = await registry();
    const image = await pushImage(reg.url, "acme/shop", "a");
    await fetch(`${reg.url}/v2/acme/shop/manifests/b`, {
      method: "PUT",
      headers: { "Content-Type": MEDIA_TYPES.ociManifest },
      body: image.body,
    });
    const response = await fetch(`${reg.url}/v2/acme/shop/tags/list?n=1`);
    expect(response.headers.get("link")).toBe('</v2/acme/shop/tags/list?last=a&n=1>; rel="next"');
  });

  it("rejects a negative or non-numeric n", async () => {
    const reg = await registry();
    await pushImage(reg.url, "acme/shop", "a");
    for (const n of ["-1", "two"]) {
      const response = await fetch(`${reg.url}/v2/acme/shop/tags/list?n=${n}`);
      expect(response.status).toBe(400);
      expect(((await response.json()) as any).errors[0].code).toBe("PAGINATION_NUMBER_INVALID");
    }
  });
});

describe("embedded registry: authentication", () => {
  const basic = (user: string, password: string) =>
    `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

  it("demands basic credentials and accepts the right ones", async () => {
    const reg = await registry({ auth: { kind: "basic", users: { ferry: "s3cret" } } });
    const anonymous = await fetch(`${reg.url}/v2/`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Basic realm=/);
    expect(((await anonymous.json()) as any).errors[0].code).toBe("UNAUTHORIZED");
    expect(
      (await fetch(`${reg.url}/v2/`, { headers: { Authorization: basic("ferry", "wrong") } })).status,
    ).toBe(401);
    expect(
      (await fetch(`${reg.url}/v2/`, { headers: { Authorization: basic("ferry", "s3cret") } })).status,
    ).toBe(200);
    await pushImage(reg.url, "acme/shop", "1.0.0", { headers: { Authorization: basic("ferry", "s3cret") } });
    expect(reg.tags("acme/shop")).toEqual(["1.0.0"]);
  });

  it("runs the token flow: challenge, token for the scope, access, expiry", async () => {
    let clock = Date.parse("2024-05-01T00:00:00Z");
    const reg = await registry({
      auth: { kind: "bearer", users: { ferry: "s3cret" }, tokenTtlSeconds: 60 },
      now: () => clock,
    });
    const challenge = await fetch(`${reg.url}/v2/acme/shop/tags/list`);
    expect(challenge.status).toBe(401);
    const header = challenge.headers.get("www-authenticate")!;
    expect(header).toBe(
      `Bearer realm="${reg.url}/token",service="ferry-embedded-registry",scope="repository:acme/shop:pull"`,
    );

    const params = Object.fromEntries(
      [...header.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1], match[2]]),
    );
    expect(
      (await fetch(`${params.realm}?service=${params.service}&scope=repository:acme/shop:pull,push`)).status,
    ).toBe(401);
    const tokenResponse = await fetch(
      `${params.realm}?service=${params.service}&scope=repository:acme/shop:pull,push`,
      { headers: { Authorization: basic("ferry", "s3cret") } },
    );
    expect(tokenResponse.status).toBe(200);
    const { token, expires_in } = (await tokenResponse.json()) as any;
    expect(expires_in).toBe(60);
    const bearer = { Authorization: `Bearer ${token}` };

    await pushImage(reg.url, "acme/shop", "1.0.0", { headers: bearer });
    expect((await fetch(`${reg.url}/v2/acme/shop/tags/list`, { headers: bearer })).status).toBe(200);
    const otherRepository = await fetch(`${reg.url}/v2/acme/other/tags/list`, { headers: bearer });
    expect(otherRepository.status).toBe(401);
    expect(otherRepository.headers.get("www-authenticate")).toContain('error="insufficient_scope"');

    clock += 61_000;
    const expired = await fetch(`${reg.url}/v2/acme/shop/tags/list`, { headers: bearer });
    expect(expired.status).toBe(401);
    expect(((await expired.json()) as any).errors[0].code).toBe("UNAUTHORIZED");
  });

  it("grants no push with a pull-only token", async () => {
    const reg = await registry({ auth: { kind: "bearer", users: { ferry: "s3cret" } } });
    const { token } = (await (
      await fetch(`${reg.url}/token?scope=repository:acme/shop:pull`, {
        headers: { Authorization: basic("ferry", "s3cret") },
      })
    ).json()) as any;
    const response = await fetch(`${reg.url}/v2/acme/shop/blobs/uploads/`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain('scope="repository:acme/shop:pull,push"');
  });
});

describe("embedded registry: notifications", () => {
  async function receiver(status = () => 200) {
    const received: { headers: IncomingMessage["headers"]; body: any }[] = [];
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const code = status();
      if (code < 300)
        received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString()) });
      res.statusCode = code;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const close = () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    started.push({ close });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, received };
  }

  it("posts a distribution push event with the endpoint's headers after a manifest PUT", async () => {
    const endpoint = await receiver();
    const reg = await registry({
      notifications: [{ url: endpoint.url, headers: { Authorization: "Bearer hook-secret" } }],
    });
    const pushed = await pushImage(reg.url, "acme/shop", "1.8.0", { mediaType: MEDIA_TYPES.dockerManifest });
    await reg.notificationsIdle();

    expect(endpoint.received).toHaveLength(1);
    const [delivery] = endpoint.received;
    expect(delivery!.headers["content-type"]).toBe(EVENTS_MEDIA_TYPE);
    expect(delivery!.headers.authorization).toBe("Bearer hook-secret");
    const [event] = delivery!.body.events;
    expect(event).toMatchObject({
      action: "push",
      target: {
        mediaType: MEDIA_TYPES.dockerManifest,
        size: pushed.size,
        length: pushed.size,
        digest: pushed.digest,
        repository: "acme/shop",
        url: `${reg.url}/v2/acme/shop/manifests/${pushed.digest}`,
        tag: "1.8.0",
      },
      request: { method: "PUT", host: reg.host },
      source: { addr: reg.host },
    });
    expect(event.id).toEqual(expect.any(String));
    expect(Number.isNaN(Date.parse(event.timestamp))).toBe(false);
    expect(event.source.instanceID).toEqual(expect.any(String));
  });

  it("posts a delete event after a manifest DELETE, to endpoints added later too", async () => {
    const endpoint = await receiver();
    const reg = await registry();
    reg.addNotificationEndpoint({ url: endpoint.url });
    await pushImage(reg.url, "acme/shop", "1.0.0");
    await fetch(`${reg.url}/v2/acme/shop/manifests/1.0.0`, { method: "DELETE" });
    await reg.notificationsIdle();
    expect(endpoint.received.map((delivery) => delivery.body.events[0].action)).toEqual(["push", "delete"]);
    expect(endpoint.received[1]!.body.events[0].target).toEqual({ repository: "acme/shop", tag: "1.0.0" });
  });

  it("follows a delete by digest with one delete event per tag that pointed at it", async () => {
    const endpoint = await receiver();
    const reg = await registry({ notifications: [{ url: endpoint.url }] });
    const pushed = await pushImage(reg.url, "acme/shop", "1.0.0");
    await fetch(`${reg.url}/v2/acme/shop/manifests/${pushed.digest}`, { method: "DELETE" });
    await reg.notificationsIdle();
    expect(endpoint.received.slice(1).map((delivery) => delivery.body.events[0].target)).toEqual([
      { repository: "acme/shop", digest: pushed.digest },
      { repository: "acme/shop", tag: "1.0.0" },
    ]);
  });

  it("retries a failed delivery until the endpoint accepts it", async () => {
    let calls = 0;
    const endpoint = await receiver(() => (++calls <= 2 ? 503 : 200));
    const reg = await registry({
      notifications: [{ url: endpoint.url }],
      notificationDelivery: { backoffMs: 1 },
    });
    await pushImage(reg.url, "acme/shop", "1.0.0");
    await reg.notificationsIdle();
    expect(calls).toBe(3);
    expect(endpoint.received).toHaveLength(1);
  });

  it("answers the manifest PUT even when the endpoint is unreachable", async () => {
    const reg = await registry({
      notifications: [{ url: "http://127.0.0.1:1/unreachable" }],
      notificationDelivery: { backoffMs: 1, maxAttempts: 2 },
    });
    await pushImage(reg.url, "acme/shop", "1.0.0");
    expect(reg.tags("acme/shop")).toEqual(["1.0.0"]);
    await reg.notificationsIdle();
  });
});

describe("embedded registry: introspection", () => {
  it("counts requests in total and by route, and lists repositories", async () => {
    const reg = await registry();
    await fetch(`${reg.url}/v2/`);
    await pushImage(reg.url, "acme/shop", "1.0.0");
    await pushImage(reg.url, "acme/api", "2.0.0");
    await fetch(`${reg.url}/v2/acme/shop/tags/list`);
    expect(reg.requestCount()).toBe(8);
    expect(reg.requestCountsByRoute()).toEqual({
      "GET /v2/": 1,
      "GET /v2/<name>/tags/list": 1,
      "POST /v2/<name>/blobs/uploads/": 4,
      "PUT /v2/<name>/manifests/<reference>": 2,
    });
    expect(reg.repositories()).toEqual(["acme/api", "acme/shop"]);
    const catalog = (await (await fetch(`${reg.url}/v2/_catalog`)).json()) as any;
    expect(catalog).toEqual({ repositories: ["acme/api", "acme/shop"] });
  });
});
