import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  MEDIA_TYPES,
  startEmbeddedRegistry,
  type EmbeddedRegistry,
} from "../../../packages/sandbox/src/registry/embedded-registry.js";
import {
  distributionMissingMessage,
  startDistribution,
  type RunningDistribution,
} from "../../support/registry-distribution.js";

/**
 * Side by side with the CNCF distribution binary (Debian's docker-registry, when installed): the
 * same requests must get the same status and error code from both. Behaviour where the installed
 * 2.8 and distribution v3 differ, and the embedded registry follows v3, is left out on purpose:
 * `n`/`last` pagination and PAGINATION_NUMBER_INVALID, `n=0` on an unknown repository, DELETE by
 * tag, a Docker v2 manifest served to a client that does not list it in Accept, and a monolithic
 * `POST ?digest=` (which 2.8 answers with an upload session, as the spec allows).
 */
const missing = distributionMissingMessage();
const digestOf = (bytes: Buffer | string) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

describe.skipIf(missing !== undefined)("the embedded registry answers like CNCF distribution", () => {
  let distribution: RunningDistribution;
  let embedded: EmbeddedRegistry;
  const config = Buffer.from('{"architecture":"amd64","os":"linux"}');
  const layer = Buffer.from("layer bytes");
  const oci = JSON.stringify({
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.ociManifest,
    config: {
      mediaType: "application/vnd.oci.image.config.v1+json",
      digest: digestOf(config),
      size: config.length,
    },
    layers: [
      {
        mediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
        digest: digestOf(layer),
        size: layer.length,
      },
    ],
  });
  const docker = JSON.stringify({
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.dockerManifest,
    config: {
      mediaType: "application/vnd.docker.container.image.v1+json",
      digest: digestOf(config),
      size: config.length,
    },
    layers: [
      {
        mediaType: "application/vnd.docker.image.rootfs.diff.tar.gzip",
        digest: digestOf(layer),
        size: layer.length,
      },
    ],
  });

  beforeAll(async () => {
    [distribution, embedded] = await Promise.all([startDistribution("none"), startEmbeddedRegistry()]);
    for (const base of [distribution.url, embedded.url]) {
      for (const blob of [config, layer]) {
        const start = await fetch(`${base}/v2/acme/shop/blobs/uploads/`, { method: "POST" });
        const location = new URL(start.headers.get("location")!, base);
        location.searchParams.set("digest", digestOf(blob));
        expect((await fetch(location, { method: "PUT", body: blob })).status).toBe(201);
      }
      for (const [tag, type, body] of [
        ["oci", MEDIA_TYPES.ociManifest, oci],
        ["docker", MEDIA_TYPES.dockerManifest, docker],
      ]) {
        expect(
          (
            await fetch(`${base}/v2/acme/shop/manifests/${tag}`, {
              method: "PUT",
              headers: { "Content-Type": type! },
              body,
            })
          ).status,
        ).toBe(201);
      }
    }
  });

  afterAll(async () => {
    await Promise.all([distribution?.close(), embedded?.close()]);
  });

  const probes: [string, string, RequestInit?][] = [
    ["the base endpoint", "/v2/"],
    ["tags of an unknown repository", "/v2/acme/none/tags/list"],
    ["a name outside the grammar", "/v2/Acme/tags/list"],
    ["an unknown route", "/v2/acme/shop/whatever"],
    ["a method the route does not serve", "/v2/acme/shop/tags/list", { method: "POST" }],
    ["a known blob", `/v2/acme/shop/blobs/${digestOf(config)}`, { method: "HEAD" }],
    ["an unknown blob", `/v2/acme/shop/blobs/${digestOf("nope")}`],
    ["a blob digest of the wrong length", "/v2/acme/shop/blobs/sha256:abc"],
    ["an OCI manifest without Accept", "/v2/acme/shop/manifests/oci"],
    ["an OCI manifest with Accept */*", "/v2/acme/shop/manifests/oci", { headers: { Accept: "*/*" } }],
    [
      "an OCI manifest with its Accept",
      "/v2/acme/shop/manifests/oci",
      { headers: { Accept: MEDIA_TYPES.ociManifest } },
    ],
    ["an OCI manifest by digest without Accept", `/v2/acme/shop/manifests/${digestOf(oci)}`],
    [
      "a Docker manifest with its Accept",
      "/v2/acme/shop/manifests/docker",
      { method: "HEAD", headers: { Accept: MEDIA_TYPES.dockerManifest } },
    ],
    ["an unknown tag", "/v2/acme/shop/manifests/9.9.9", { headers: { Accept: MEDIA_TYPES.dockerManifest } }],
    ["a manifest PUT without Content-Type", "/v2/acme/shop/manifests/x", { method: "PUT", body: oci }],
    [
      "a manifest PUT whose Content-Type contradicts its mediaType",
      "/v2/acme/shop/manifests/x",
      { method: "PUT", body: oci, headers: { "Content-Type": MEDIA_TYPES.dockerManifest } },
    ],
    [
      "a manifest PUT of invalid JSON",
      "/v2/acme/shop/manifests/x",
      { method: "PUT", body: "{", headers: { "Content-Type": MEDIA_TYPES.ociManifest } },
    ],
    [
      "a manifest PUT naming a missing blob",
      "/v2/acme/shop/manifests/x",
      {
        method: "PUT",
        body: oci.replace(digestOf(layer), digestOf("missing")),
        headers: { "Content-Type": MEDIA_TYPES.ociManifest },
      },
    ],
    [
      "a manifest PUT by the wrong digest",
      `/v2/acme/shop/manifests/${digestOf("other")}`,
      { method: "PUT", body: oci, headers: { "Content-Type": MEDIA_TYPES.ociManifest } },
    ],
    [
      "a manifest PUT with an invalid tag",
      "/v2/acme/shop/manifests/-bad",
      { method: "PUT", body: oci, headers: { "Content-Type": MEDIA_TYPES.ociManifest } },
    ],
    ["an upload session start", "/v2/acme/shop/blobs/uploads/", { method: "POST" }],
    [
      "the delete of an unknown manifest",
      `/v2/acme/shop/manifests/${digestOf("unknown")}`,
      { method: "DELETE" },
    ],
  ];

  it.each(probes)("%s", async (_name, path, init) => {
    const answer = async (base: string) => {
      const response = await fetch(`${base}${path}`, init);
      const text = await response.text();
      let code = "";
      try {
        code =
          (JSON.parse(text) as { errors?: { code: string }[] }).errors
            ?.map((error) => error.code)
            .join(",") ?? "";
      } catch {
        code = text.trim();
      }
      return { status: response.status, code, hasDigest: response.headers.has("docker-content-digest") };
    };
    const [real, ours] = await Promise.all([answer(distribution.url), answer(embedded.url)]);
    expect(ours).toEqual(real);
  });

  it("answers an unknown upload session with 404 too (code: the spec's BLOB_UPLOAD_UNKNOWN, where distribution's stateless sessions say BLOB_UPLOAD_INVALID)", async () => {
    const path = "/v2/acme/shop/blobs/uploads/3f0c1a8e-1d2b-4c5d-8e9f-0a1b2c3d4e5f";
    const [real, ours] = await Promise.all(
      [distribution.url, embedded.url].map(async (base) => {
        const response = await fetch(`${base}${path}`, { method: "PATCH", body: "x" });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    expect(ours).toBe(real);
  });
});
