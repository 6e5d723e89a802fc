import { createHash, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { pushBlob, putManifest } from "../support/registry-upload.js";

/**
 * Cosign signature artifacts written with node:crypto in cosign's documented format
 * (https://github.com/sigstore/cosign/blob/main/specs/SIGNATURE_SPEC.md): a simple-signing JSON
 * payload as a layer of media type application/vnd.dev.cosign.simplesigning.v1+json, its ECDSA
 * P-256/SHA-256 signature in the `dev.cosignproject.cosign/signature` annotation. The tests use
 * them for what cosign's CLI cannot produce (a payload for another digest, a tampered payload,
 * referrers) and where the cosign binary is missing. Pushed over the distribution HTTP API.
 */

const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const OCI_INDEX = "application/vnd.oci.image.index.v1+json";
const SIMPLE_SIGNING = "application/vnd.dev.cosign.simplesigning.v1+json";
const SIG_ARTIFACT = "application/vnd.dev.cosign.artifact.sig.v1+json";

export interface KeyPair {
  privateKey: KeyObject;
  publicPem: string;
}

export function generateKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { privateKey, publicPem: publicKey.export({ type: "spki", format: "pem" }).toString() };
}

export function simpleSigningPayload(reference: string, digest: string): Buffer {
  return Buffer.from(
    JSON.stringify({
      critical: {
        identity: { "docker-reference": reference },
        image: { "docker-manifest-digest": digest },
        type: "cosign container image signature",
      },
      optional: null,
    }),
  );
}

export function sha256(bytes: Buffer | string): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

export interface SignatureOptions {
  /** The digest the payload names (default: the signed image's). */
  payloadDigest?: string;
  /** Sign one payload and store another (an attacker editing the stored payload). */
  tamper?: boolean;
  /** `legacy`: cosign's `sha256-<hex>.sig` tag; `referrers-tag`: an OCI 1.1 referrer listed in the `sha256-<hex>` tag index. */
  mode?: "legacy" | "referrers-tag";
}

/** Signs payload bytes, answering the base64 signature (node:crypto, or `cosign sign-blob`). */
export type SignBytes = (payload: Buffer) => Promise<string>;

export function signWithKey(key: KeyObject): SignBytes {
  return async (payload) => sign("sha256", payload, key).toString("base64");
}

/** Pushes a cosign signature of `repository@digest` to the registry at `registryUrl`. */
export async function pushSignature(
  registryUrl: string,
  repository: string,
  reference: string,
  digest: string,
  signBytes: SignBytes,
  options: SignatureOptions = {},
): Promise<void> {
  const signedPayload = simpleSigningPayload(reference, options.payloadDigest ?? digest);
  const signature = await signBytes(signedPayload);
  const stored = options.tamper
    ? Buffer.from(signedPayload.toString("utf8").replace('"optional":null', '"optional":{"x":"1"}'))
    : signedPayload;
  const config = Buffer.from("{}");
  await pushBlob(registryUrl, repository, stored);
  await pushBlob(registryUrl, repository, config);
  const referrer = options.mode === "referrers-tag";
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      ...(referrer ? { artifactType: SIG_ARTIFACT } : {}),
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        size: config.length,
        digest: sha256(config),
      },
      layers: [
        {
          mediaType: SIMPLE_SIGNING,
          size: stored.length,
          digest: sha256(stored),
          annotations: { "dev.cosignproject.cosign/signature": signature },
        },
      ],
      ...(referrer ? { subject: { mediaType: OCI_MANIFEST, digest, size: 0 } } : {}),
    }),
  );
  const tag = digest.replace(":", "-");
  if (!referrer) {
    await putManifest(registryUrl, repository, `${tag}.sig`, OCI_MANIFEST, manifest);
    return;
  }
  await putManifest(registryUrl, repository, sha256(manifest), OCI_MANIFEST, manifest);
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_INDEX,
      manifests: [
        {
          mediaType: OCI_MANIFEST,
          digest: sha256(manifest),
          size: manifest.length,
          artifactType: SIG_ARTIFACT,
        },
      ],
    }),
  );
  await putManifest(registryUrl, repository, tag, OCI_INDEX, index);
}

/**
 * Pushes an in-toto attestation of `digest` the way `cosign attest --key` stores it: a DSSE
 * envelope (https://github.com/secure-systems-lab/dsse/blob/master/envelope.md) as a layer of
 * media type application/vnd.dsse.envelope.v1+json under the legacy `sha256-<hex>.att` tag.
 */
export async function pushAttestation(
  registryUrl: string,
  repository: string,
  digest: string,
  predicateType: string,
  predicate: unknown,
  key: KeyObject,
): Promise<void> {
  const payloadType = "application/vnd.in-toto+json";
  const payload = Buffer.from(
    JSON.stringify({
      _type: "https://in-toto.io/Statement/v0.1",
      predicateType,
      subject: [{ name: repository, digest: { sha256: digest.replace(/^sha256:/, "") } }],
      predicate,
    }),
  );
  const pae = Buffer.concat([
    Buffer.from(`DSSEv1 ${payloadType.length} ${payloadType} ${payload.length} `),
    payload,
  ]);
  const envelope = Buffer.from(
    JSON.stringify({
      payloadType,
      payload: payload.toString("base64"),
      signatures: [{ keyid: "", sig: sign("sha256", pae, key).toString("base64") }],
    }),
  );
  const config = Buffer.from("{}");
  await pushBlob(registryUrl, repository, envelope);
  await pushBlob(registryUrl, repository, config);
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        size: config.length,
        digest: sha256(config),
      },
      layers: [
        {
          mediaType: "application/vnd.dsse.envelope.v1+json",
          size: envelope.length,
          digest: sha256(envelope),
          annotations: { "dev.cosignproject.cosign/signature": "", predicateType },
        },
      ],
    }),
  );
  await putManifest(registryUrl, repository, `${digest.replace(":", "-")}.att`, OCI_MANIFEST, manifest);
}
