import type { Bundle } from "@sigstore/bundle";
import { CONFIGURED_KEY_HINT } from "./sigstore-verify.js";

/**
 * The formats cosign stores signatures and attestations in
 * (https://github.com/sigstore/cosign/blob/main/specs/SIGNATURE_SPEC.md), the bounds Ferry reads them within,
 * and the readers of their parts: a legacy layer as a Sigstore bundle, the in-toto statement of a DSSE
 * envelope, the digest a simple-signing payload names.
 */

export const COSIGN_SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature";
export const COSIGN_CERTIFICATE_ANNOTATION = "dev.sigstore.cosign/certificate";
export const COSIGN_CHAIN_ANNOTATION = "dev.sigstore.cosign/chain";
export const COSIGN_REKOR_BUNDLE_ANNOTATION = "dev.sigstore.cosign/bundle";
export const SIMPLE_SIGNING_MEDIA_TYPE = "application/vnd.dev.cosign.simplesigning.v1+json";
export const DSSE_MEDIA_TYPE = "application/vnd.dsse.envelope.v1+json";
/** The artifactType cosign gives signatures it stores as OCI 1.1 referrers. */
export const COSIGN_SIGNATURE_ARTIFACT_TYPE = "application/vnd.dev.cosign.artifact.sig.v1+json";
/** The artifactType (and layer media type) of a Sigstore bundle stored as an OCI 1.1 referrer. */
export const SIGSTORE_BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json";
export const COSIGN_PAYLOAD_TYPE = "cosign container image signature";
export const OCI_EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json";
export const LEGACY_BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle+json;version=0.1";
/** The predicate of the in-toto statement a Sigstore-bundle image signature carries. */
export const COSIGN_SIGN_PREDICATE_TYPE = "https://sigstore.dev/cosign/sign/v1";
export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";

export const SIGNATURE_ARTIFACT_TYPES = [
  COSIGN_SIGNATURE_ARTIFACT_TYPE,
  SIGSTORE_BUNDLE_MEDIA_TYPE,
  DSSE_MEDIA_TYPE,
];

/** Every count and size is bounded before any request is sent. */
export const SIGNATURE_LIMITS = {
  /** Layers read from one signature or attestation manifest. */
  layersPerManifest: 8,
  /** Manifests read from one referrers index. */
  referrers: 8,
  /** A simple-signing payload is a few hundred bytes. */
  payloadBytes: 64 * 1024,
  /** A DSSE envelope or Sigstore bundle with a provenance statement: tens of kilobytes. */
  envelopeBytes: 1024 * 1024,
  /** base64 of a DER ECDSA signature is under 100 characters; RSA-4096 under 700. */
  signatureChars: 2048,
  /** A certificate chain annotation or a Rekor bundle annotation. */
  annotationChars: 64 * 1024,
  /** Results remembered per checker (a signature check is done once per digest). */
  cacheEntries: 4096,
  /** How long "not signed" is remembered, unless the repository is hinted at (a push, a signature). */
  unsignedTtlMs: 10 * 60_000,
};

export type Layer = { mediaType?: unknown; digest: string; annotations?: Record<string, unknown> };

/**
 * A Sigstore bundle (JSON form) for a legacy cosign layer: the certificate and Rekor entry from
 * the annotations when it was signed keyless, else a public-key hint the configured key answers.
 */
export function legacyBundle(
  annotations: Record<string, unknown>,
  content: Record<string, unknown>,
): unknown {
  const certificate = annotations[COSIGN_CERTIFICATE_ANNOTATION];
  const rekor = annotations[COSIGN_REKOR_BUNDLE_ANNOTATION];
  const pemCertificate =
    typeof certificate === "string" && certificate.length <= SIGNATURE_LIMITS.annotationChars
      ? pemToBase64Der(certificate)
      : undefined;
  return {
    // v0.1: a Rekor entry from cosign's annotation has a signed entry timestamp and no inclusion
    // proof, which later bundle versions require.
    mediaType: LEGACY_BUNDLE_MEDIA_TYPE,
    verificationMaterial: {
      ...(pemCertificate !== undefined
        ? { certificate: { rawBytes: pemCertificate } }
        : { publicKey: { hint: CONFIGURED_KEY_HINT } }),
      tlogEntries:
        typeof rekor === "string" && rekor.length <= SIGNATURE_LIMITS.annotationChars
          ? rekorEntry(rekor)
          : [],
    },
    ...content,
  };
}

/** cosign's Rekor bundle annotation (`{SignedEntryTimestamp, Payload}`) as a bundle tlog entry. */
function rekorEntry(annotation: string): unknown[] {
  const rekor = jsonOf(Buffer.from(annotation)) as
    | {
        SignedEntryTimestamp?: unknown;
        Payload?: { body?: unknown; integratedTime?: unknown; logIndex?: unknown; logID?: unknown };
      }
    | undefined;
  const payload = rekor?.Payload;
  if (typeof payload?.body !== "string" || typeof payload.logID !== "string") return [];
  const body = jsonOf(Buffer.from(payload.body, "base64")) as
    { kind?: unknown; apiVersion?: unknown } | undefined;
  return [
    {
      logIndex: String(payload.logIndex),
      logId: { keyId: Buffer.from(payload.logID, "hex").toString("base64") },
      kindVersion: { kind: String(body?.kind), version: String(body?.apiVersion) },
      integratedTime: String(payload.integratedTime),
      inclusionPromise: { signedEntryTimestamp: String(rekor?.SignedEntryTimestamp) },
      canonicalizedBody: payload.body,
    },
  ];
}

function pemToBase64Der(pem: string): string | undefined {
  const match = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----/.exec(pem);
  return match?.[1]?.replace(/\s+/g, "");
}

export function jsonOf(bytes: Buffer): Record<string, unknown> | undefined {
  try {
    const json = JSON.parse(bytes.toString("utf8")) as unknown;
    return typeof json === "object" && json !== null && !Array.isArray(json)
      ? (json as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The in-toto statement a DSSE bundle carries: its predicate type, subject digests and predicate. */
export function inTotoStatement(
  bundle: Bundle,
): { predicateType: unknown; subjects: string[]; predicate: unknown } | undefined {
  if (bundle.content.$case !== "dsseEnvelope") return undefined;
  const envelope = bundle.content.dsseEnvelope;
  if (envelope.payloadType !== IN_TOTO_PAYLOAD_TYPE) return undefined;
  const statement = jsonOf(envelope.payload);
  if (statement === undefined) return undefined;
  const subjects = (Array.isArray(statement.subject) ? statement.subject.slice(0, 64) : [])
    .map((subject: { digest?: { sha256?: unknown } } | null) => subject?.digest?.sha256)
    .filter((hex: unknown): hex is string => typeof hex === "string")
    .map((hex: string) => `sha256:${hex}`);
  return { predicateType: statement.predicateType, subjects, predicate: statement.predicate };
}

/** `critical.image.docker-manifest-digest` of a cosign simple-signing payload, when it is one. */
export function signedDigest(payload: Buffer): string | undefined {
  const critical = (
    jsonOf(payload) as
      { critical?: { type?: unknown; image?: { "docker-manifest-digest"?: unknown } } } | undefined
  )?.critical;
  if (critical?.type !== COSIGN_PAYLOAD_TYPE) return undefined;
  const digest = critical.image?.["docker-manifest-digest"];
  return typeof digest === "string" ? digest : undefined;
}
