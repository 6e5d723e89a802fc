/**
 * Uploads by the OCI distribution spec, for tests that push what the sandbox's `pushImage` does
 * not make (signatures, attestations, referrers): a monolithic blob upload (POST then PUT with the
 * digest) and a manifest PUT
 * (https://github.com/opencontainers/distribution-spec/blob/main/spec.md#pushing-blobs).
 */
import { createHash } from "node:crypto";

export async function pushBlob(registryUrl: string, repository: string, bytes: Buffer): Promise<void> {
  const start = await fetch(`${registryUrl}/v2/${repository}/blobs/uploads/`, { method: "POST" });
  if (start.status !== 202) throw new Error(`blob upload start answered ${start.status}`);
  const location = new URL(start.headers.get("location")!, registryUrl);
  location.searchParams.set("digest", `sha256:${createHash("sha256").update(bytes).digest("hex")}`);
  const put = await fetch(location, {
    method: "PUT",
    headers: { "content-type": "application/octet-stream" },
    body: bytes,
  });
  if (put.status !== 201) throw new Error(`blob upload answered ${put.status}`);
}

export async function putManifest(
  registryUrl: string,
  repository: string,
  reference: string,
  mediaType: string,
  body: Buffer,
): Promise<void> {
  const response = await fetch(`${registryUrl}/v2/${repository}/manifests/${reference}`, {
    method: "PUT",
    headers: { "content-type": mediaType },
    body,
  });
  if (response.status !== 201)
    throw new Error(`manifest ${reference} answered ${response.status}: ${await response.text()}`);
}
