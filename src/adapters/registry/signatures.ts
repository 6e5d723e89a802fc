import { createHash, createPublicKey, verify as verifySignature, type KeyObject } from "node:crypto";
import type { SignatureCheck, VerifyPolicy } from "../../core/policy/verify.js";
import type { ArtifactManifest, RegistryClient } from "./registry-client.js";

/**
 * Discovery and verification of cosign signatures for one image digest, over the registry
 * client's public methods (docs/security.md "Signed images"). Three places are looked at, in
 * this order, and the first verified signature wins:
 *
 * 1. cosign's legacy tag `sha256-<hex>.sig` in the image's repository (cosign's default; the only
 *    one registries without the referrers API hold, e.g. CNCF distribution 2.8),
 * 2. the OCI 1.1 referrers API `GET /v2/<name>/referrers/<digest>`
 *    (https://github.com/opencontainers/distribution-spec/blob/main/spec.md#listing-referrers),
 * 3. when that API is absent (404), the referrers tag schema `sha256-<hex>` holding an index
 *    (same section, "referrers tag schema").
 *
 * A signature manifest's layers are cosign "simple signing" payloads
 * (https://github.com/sigstore/cosign/blob/main/specs/SIGNATURE_SPEC.md): the layer blob is the
 * JSON payload, its `dev.cosignproject.cosign/signature` annotation the base64 ECDSA signature of
 * those bytes. The payload's `critical.image.docker-manifest-digest` must be the digest checked:
 * a valid signature of another image is not a signature of this one.
 */

export const COSIGN_SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature";
export const SIMPLE_SIGNING_MEDIA_TYPE = "application/vnd.dev.cosign.simplesigning.v1+json";
/** The artifactType cosign gives signatures it stores as OCI 1.1 referrers. */
export const COSIGN_SIGNATURE_ARTIFACT_TYPE = "application/vnd.dev.cosign.artifact.sig.v1+json";
const COSIGN_PAYLOAD_TYPE = "cosign container image signature";

/** Every count and size is bounded before any request is sent. */
export const SIGNATURE_LIMITS = {
  /** Signature layers read from one signature manifest. */
  layersPerManifest: 8,
  /** Signature manifests read from one referrers index. */
  referrers: 8,
  /** A simple-signing payload is a few hundred bytes. */
  payloadBytes: 64 * 1024,
  /** base64 of a DER ECDSA signature is under 100 characters; RSA-4096 under 700. */
  signatureChars: 2048,
  /** Verified digests remembered per checker (a signature check is done once per digest). */
  cacheEntries: 4096,
};

type Source = Pick<RegistryClient, "manifest" | "blob" | "referrers">;

/** What one signature layer told us, for the reason when none verifies. */
type Finding = "no-signature" | "bad-signature" | "other-digest" | "bad-payload";

export interface SignatureChecker {
  check(repository: string, digest: string, verify: VerifyPolicy): Promise<SignatureCheck>;
}

export function createSignatureChecker(source: Source): SignatureChecker {
  const verified = new Map<string, SignatureCheck>();
  const keys = new Map<string, KeyObject | Error>();

  function keyOf(pem: string): KeyObject | Error {
    let key = keys.get(pem);
    if (key === undefined) {
      try {
        key = createPublicKey(pem);
      } catch (error) {
        key = new Error(`the configured key is not a usable public key: ${(error as Error).message}`);
      }
      if (keys.size >= 64) keys.clear();
      keys.set(pem, key);
    }
    return key;
  }

  async function checkLayers(
    repository: string,
    digest: string,
    manifest: ArtifactManifest,
    key: KeyObject,
    findings: Set<Finding>,
  ): Promise<boolean> {
    const layers = Array.isArray(manifest.json.layers) ? manifest.json.layers : [];
    for (const layer of layers.slice(0, SIGNATURE_LIMITS.layersPerManifest) as {
      mediaType?: unknown;
      digest?: unknown;
      annotations?: Record<string, unknown>;
    }[]) {
      if (layer === null || typeof layer !== "object") continue;
      const signature = layer.annotations?.[COSIGN_SIGNATURE_ANNOTATION];
      if (
        layer.mediaType !== SIMPLE_SIGNING_MEDIA_TYPE ||
        typeof layer.digest !== "string" ||
        typeof signature !== "string" ||
        signature.length === 0 ||
        signature.length > SIGNATURE_LIMITS.signatureChars
      ) {
        findings.add("no-signature");
        continue;
      }
      const payload = await source.blob(repository, layer.digest, SIGNATURE_LIMITS.payloadBytes);
      if (!verifySignature("sha256", payload, key, Buffer.from(signature, "base64"))) {
        findings.add("bad-signature");
        continue;
      }
      const signed = signedDigest(payload);
      if (signed === undefined) findings.add("bad-payload");
      else if (signed !== digest) findings.add("other-digest");
      else return true;
    }
    return false;
  }

  async function checkOnce(
    repository: string,
    digest: string,
    verify: VerifyPolicy,
  ): Promise<SignatureCheck> {
    const key = keyOf(verify.key);
    if (key instanceof Error) return { verified: false, reason: key.message };
    const findings = new Set<Finding>();
    const tag = digest.replace(":", "-");

    const legacy = await source.manifest(repository, `${tag}.sig`);
    if (legacy !== undefined && (await checkLayers(repository, digest, legacy, key, findings)))
      return { verified: true, via: `${tag}.sig` };

    const referrers = await source.referrers(repository, digest);
    const index = referrers ?? (await source.manifest(repository, tag))?.json;
    const via = referrers !== undefined ? "referrers API" : `referrers tag ${tag}`;
    const entries = Array.isArray(index?.manifests) ? (index.manifests as unknown[]) : [];
    const signatures = entries
      .filter(
        (entry): entry is { digest: string } =>
          typeof entry === "object" &&
          entry !== null &&
          (entry as { artifactType?: unknown }).artifactType === COSIGN_SIGNATURE_ARTIFACT_TYPE &&
          typeof (entry as { digest?: unknown }).digest === "string",
      )
      .slice(0, SIGNATURE_LIMITS.referrers);
    for (const entry of signatures) {
      const manifest = await source.manifest(repository, entry.digest);
      if (manifest === undefined) continue;
      // A referrer names the image it signs as its subject; one for another image is not ours.
      const subject = (manifest.json.subject as { digest?: unknown } | undefined)?.digest;
      if (subject !== digest) {
        findings.add("other-digest");
        continue;
      }
      if (await checkLayers(repository, digest, manifest, key, findings)) return { verified: true, via };
    }
    return {
      verified: false,
      reason: describeFindings(findings, legacy !== undefined || signatures.length > 0),
    };
  }

  return {
    async check(repository, digest, verify) {
      const cacheKey = `${repository}@${digest}\n${createHash("sha256").update(verify.key).digest("hex")}`;
      const cached = verified.get(cacheKey);
      if (cached !== undefined) return cached;
      const result = await checkOnce(repository, digest, verify);
      // Only successes are cached: a signature pushed after the image (CI signs after the push) is
      // found on the next look, and a verified digest is never fetched again.
      if (result.verified) {
        if (verified.size >= SIGNATURE_LIMITS.cacheEntries) verified.delete(verified.keys().next().value!);
        verified.set(cacheKey, result);
      }
      return result;
    },
  };
}

/** `critical.image.docker-manifest-digest` of a cosign simple-signing payload, when it is one. */
function signedDigest(payload: Buffer): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(payload.toString("utf8"));
  } catch {
    return undefined;
  }
  const critical = (json as { critical?: { type?: unknown; image?: { "docker-manifest-digest"?: unknown } } })
    ?.critical;
  if (critical?.type !== COSIGN_PAYLOAD_TYPE) return undefined;
  const digest = critical.image?.["docker-manifest-digest"];
  return typeof digest === "string" ? digest : undefined;
}

function describeFindings(findings: Set<Finding>, found: boolean): string {
  if (findings.has("other-digest")) return "its signature is for another digest";
  if (findings.has("bad-signature")) return "a signature was found but does not verify with the key";
  if (findings.has("bad-payload")) return "the signed payload is not a cosign image signature";
  return found ? "no cosign signature layer found" : "no cosign signature found (legacy .sig tag, referrers)";
}
