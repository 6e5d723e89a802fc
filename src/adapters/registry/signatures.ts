import { createHash } from "node:crypto";
import type { Bundle } from "@sigstore/bundle";
import type { TrustedRoot } from "@sigstore/protobuf-specs";
import { predicateTypeOf, provenanceFacts, provenanceMismatch } from "../../core/policy/provenance.js";
import type { AttestationType, SignatureCheck, VerifyPolicy } from "../../core/policy/verify.js";
import type { ArtifactManifest } from "./manifests.js";
import type { RegistryClient } from "./registry-client-api.js";
import {
  CONFIGURED_KEY_HINT,
  createSigstoreVerifier,
  parseBundle,
  type BundleProblem,
  type SigstoreVerifier,
} from "./sigstore-verify.js";

/**
 * Discovery of the cosign signatures and attestations of one image digest, over the registry
 * client's public methods (docs/security.md "Signed images"); every one found is verified by
 * sigstore-verify.ts. Places looked at, cheapest first, stopping at the first that verifies:
 *
 * 1. cosign's legacy tags `sha256-<hex>.sig` (signatures) and `sha256-<hex>.att` (attestations)
 *    in the image's repository (cosign 2's default; what registries without the referrers API,
 *    e.g. CNCF distribution 2.8, hold),
 * 2. the OCI 1.1 referrers API `GET /v2/<name>/referrers/<digest>`
 *    (https://github.com/opencontainers/distribution-spec/blob/main/spec.md#listing-referrers),
 *    or, when that API is absent (404), the referrers tag schema `sha256-<hex>` holding an index
 *    (same section): cosign's OCI 1.1 signatures and Sigstore bundles (cosign 3's default).
 *
 * Formats (https://github.com/sigstore/cosign/blob/main/specs/SIGNATURE_SPEC.md): a legacy
 * signature layer is a "simple signing" JSON payload with its signature in the
 * `dev.cosignproject.cosign/signature` annotation (and, when keyless, the certificate and Rekor
 * bundle in `dev.sigstore.cosign/certificate` and `dev.sigstore.cosign/bundle`); a legacy
 * attestation layer is a DSSE envelope holding an in-toto statement; a Sigstore bundle
 * (https://github.com/sigstore/protobuf-specs) holds either. A signature binds the digest it
 * names (`critical.image.docker-manifest-digest`, or the in-toto statement's subject): a valid
 * signature of another image is not a signature of this one.
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
const COSIGN_PAYLOAD_TYPE = "cosign container image signature";
const OCI_EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json";
const LEGACY_BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle+json;version=0.1";
/** The predicate of the in-toto statement a Sigstore-bundle image signature carries. */
export const COSIGN_SIGN_PREDICATE_TYPE = "https://sigstore.dev/cosign/sign/v1";
const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";

const SIGNATURE_ARTIFACT_TYPES = [
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

type Source = Pick<RegistryClient, "manifest" | "blob" | "referrers">;

/** One signed thing found, ready for verification. */
interface Evidence {
  bundle: Bundle;
  /** The signed bytes of a message signature (the simple-signing payload). */
  artifact?: Buffer;
  via: string;
}

/** Why no candidate verified; the most telling one is reported. */
const PRIORITY: Record<BundleProblem | "other-digest" | "provenance" | "none", number> = {
  provenance: 7,
  identity: 6,
  "other-digest": 5,
  chain: 4,
  tlog: 4,
  timestamp: 4,
  signature: 3,
  malformed: 2,
  none: 1,
};
type Finding = { priority: number; detail: string };

export interface SignatureChecker {
  check(repository: string, digest: string, verify: VerifyPolicy): Promise<SignatureCheck>;
  /** Forgets the "not signed" answers for a repository (a push or a signature arrived). */
  invalidate(repository: string): void;
}

export function createSignatureChecker(
  source: Source,
  options: { trustedRoot: () => TrustedRoot; now?: () => number; unsignedTtlMs?: number },
): SignatureChecker {
  const now = options.now ?? Date.now;
  const unsignedTtlMs = options.unsignedTtlMs ?? SIGNATURE_LIMITS.unsignedTtlMs;
  const results = new Map<string, { check: SignatureCheck; until: number; repository: string }>();
  let verifier: { root: TrustedRoot; verifier: SigstoreVerifier } | undefined;
  let resultsRoot: TrustedRoot | undefined;
  /** The verifier for the current trusted root (a refresh swaps the root; the next check uses it). */
  function sigstore(): SigstoreVerifier {
    const root = options.trustedRoot();
    if (verifier?.root !== root) verifier = { root, verifier: createSigstoreVerifier(root) };
    return verifier.verifier;
  }

  /** The referrers of a digest, read once per check. */
  function referrersOnce(repository: string, digest: string) {
    let pending: Promise<{ via: string; entries: { digest: string }[] }> | undefined;
    return () =>
      (pending ??= (async () => {
        const tag = digest.replace(":", "-");
        const referrers = await source.referrers(repository, digest);
        const index = referrers ?? (await source.manifest(repository, tag))?.json;
        const via = referrers !== undefined ? "referrers API" : `referrers tag ${tag}`;
        const listed = (Array.isArray(index?.manifests) ? (index.manifests as unknown[]) : []).filter(
          (entry): entry is { digest: string; artifactType?: unknown } =>
            typeof entry === "object" &&
            entry !== null &&
            typeof (entry as { digest?: unknown }).digest === "string",
        );
        // Signature types first; then referrers whose type says nothing (cosign 2's
        // --new-bundle-format leaves the empty config's type there); others (SBOMs…) never.
        const known = listed.filter((entry) =>
          SIGNATURE_ARTIFACT_TYPES.includes(entry.artifactType as string),
        );
        const untyped = listed.filter(
          (entry) => entry.artifactType === undefined || entry.artifactType === OCI_EMPTY_MEDIA_TYPE,
        );
        const entries = [...known, ...untyped].slice(0, SIGNATURE_LIMITS.referrers);
        return { via, entries };
      })());
  }

  /** Every signed layer of one manifest, as evidence. */
  async function layersOf(
    repository: string,
    manifest: ArtifactManifest,
    via: string,
    findings: Finding[],
  ): Promise<Evidence[]> {
    const evidence: Evidence[] = [];
    const layers = Array.isArray(manifest.json.layers) ? manifest.json.layers : [];
    for (const layer of layers.slice(0, SIGNATURE_LIMITS.layersPerManifest) as Layer[]) {
      if (layer === null || typeof layer !== "object" || typeof layer.digest !== "string") continue;
      const found = await evidenceOf(repository, layer, via);
      if (found instanceof Error) findings.push({ priority: PRIORITY.malformed, detail: found.message });
      else if (found !== undefined) evidence.push(found);
    }
    return evidence;
  }

  async function evidenceOf(
    repository: string,
    layer: Layer,
    via: string,
  ): Promise<Evidence | Error | undefined> {
    const annotations = layer.annotations ?? {};
    if (layer.mediaType === SIMPLE_SIGNING_MEDIA_TYPE) {
      const signature = annotations[COSIGN_SIGNATURE_ANNOTATION];
      if (
        typeof signature !== "string" ||
        signature === "" ||
        signature.length > SIGNATURE_LIMITS.signatureChars
      )
        return undefined;
      const payload = await source.blob(repository, layer.digest, SIGNATURE_LIMITS.payloadBytes);
      const bundle = parseBundle(
        legacyBundle(annotations, {
          messageSignature: {
            messageDigest: {
              algorithm: "SHA2_256",
              digest: createHash("sha256").update(payload).digest("base64"),
            },
            signature,
          },
        }),
      );
      return bundle instanceof Error ? bundle : { bundle, artifact: payload, via };
    }
    if (layer.mediaType === DSSE_MEDIA_TYPE) {
      const envelope = jsonOf(await source.blob(repository, layer.digest, SIGNATURE_LIMITS.envelopeBytes));
      if (envelope === undefined) return new Error("an attestation layer is not a DSSE envelope");
      const bundle = parseBundle(legacyBundle(annotations, { dsseEnvelope: envelope }));
      return bundle instanceof Error ? bundle : { bundle, via };
    }
    if (layer.mediaType === SIGSTORE_BUNDLE_MEDIA_TYPE) {
      const json = jsonOf(await source.blob(repository, layer.digest, SIGNATURE_LIMITS.envelopeBytes));
      const bundle = json === undefined ? new Error("a bundle layer is not JSON") : parseBundle(json);
      return bundle instanceof Error ? bundle : { bundle, via };
    }
    return undefined;
  }

  /** Legacy tag evidence, then referrers evidence, read lazily in that order. */
  async function* candidates(
    repository: string,
    digest: string,
    legacySuffix: ".sig" | ".att",
    referrers: ReturnType<typeof referrersOnce>,
    findings: Finding[],
  ): AsyncGenerator<Evidence> {
    const tag = `${digest.replace(":", "-")}${legacySuffix}`;
    const legacy = await source.manifest(repository, tag);
    if (legacy !== undefined) yield* await layersOf(repository, legacy, tag, findings);
    const { via, entries } = await referrers();
    for (const entry of entries) {
      const manifest = await source.manifest(repository, entry.digest);
      if (manifest === undefined) continue;
      // A referrer names the image it signs as its subject; one for another image is not ours.
      const subject = (manifest.json.subject as { digest?: unknown } | undefined)?.digest;
      if (subject !== digest) {
        findings.push({ priority: PRIORITY["other-digest"], detail: "its signature is for another digest" });
        continue;
      }
      yield* await layersOf(repository, manifest, via, findings);
    }
  }

  /** Verifies one piece of evidence; `want` says what it must be bound to and carry. */
  function verifyEvidence(
    evidence: Evidence,
    digest: string,
    verify: VerifyPolicy,
    want: { attestation?: AttestationType },
    findings: Finding[],
  ): boolean {
    const statement = evidence.artifact === undefined ? inTotoStatement(evidence.bundle) : undefined;
    // Cheap shape checks first: a statement of another kind is not a candidate at all.
    const predicateType =
      want.attestation !== undefined ? predicateTypeOf(want.attestation) : COSIGN_SIGN_PREDICATE_TYPE;
    if (evidence.artifact === undefined && statement?.predicateType !== predicateType) return false;
    if (evidence.artifact !== undefined && want.attestation !== undefined) return false;
    const outcome = sigstore().verify(evidence.bundle, evidence.artifact, verify, verify.tlog === true);
    if (!outcome.ok) {
      findings.push({ priority: PRIORITY[outcome.problem], detail: outcome.detail });
      return false;
    }
    const bound =
      evidence.artifact !== undefined
        ? signedDigest(evidence.artifact)
        : statement!.subjects.includes(digest)
          ? digest
          : statement!.subjects[0];
    if (bound === undefined) {
      findings.push({
        priority: PRIORITY.malformed,
        detail: "the signed payload is not a cosign image signature",
      });
      return false;
    }
    if (bound !== digest) {
      findings.push({ priority: PRIORITY["other-digest"], detail: "its signature is for another digest" });
      return false;
    }
    if (want.attestation !== undefined) {
      const mismatch = provenanceMismatch(provenanceFacts(predicateType, statement!.predicate), {
        builder: verify.builder ?? "",
        ...(verify.source !== undefined ? { source: verify.source } : {}),
      });
      if (mismatch !== undefined) {
        findings.push({ priority: PRIORITY.provenance, detail: mismatch });
        return false;
      }
    }
    return true;
  }

  async function checkOnce(
    repository: string,
    digest: string,
    verify: VerifyPolicy,
  ): Promise<SignatureCheck> {
    try {
      sigstore();
    } catch (error) {
      return { verified: false, reason: `no usable Sigstore trusted root: ${(error as Error).message}` };
    }
    const referrers = referrersOnce(repository, digest);
    const findings: Finding[] = [];
    let signedVia: string | undefined;
    for await (const evidence of candidates(repository, digest, ".sig", referrers, findings)) {
      if (verifyEvidence(evidence, digest, verify, {}, findings)) {
        signedVia = evidence.via;
        break;
      }
    }
    if (signedVia === undefined)
      return {
        verified: false,
        reason: describeFindings(findings, "no cosign signature found (legacy .sig tag, referrers)"),
      };
    const vias = [signedVia];
    for (const attestation of verify.attestations ?? []) {
      const attestationFindings: Finding[] = [];
      let attestedVia: string | undefined;
      for await (const evidence of candidates(repository, digest, ".att", referrers, attestationFindings)) {
        if (verifyEvidence(evidence, digest, verify, { attestation }, attestationFindings)) {
          attestedVia = evidence.via;
          break;
        }
      }
      if (attestedVia === undefined)
        return {
          verified: false,
          reason: `${attestation}: ${describeFindings(attestationFindings, "no attestation found (legacy .att tag, referrers)")}`,
        };
      vias.push(`${attestation} ${attestedVia}`);
    }
    return { verified: true, via: vias.join(", ") };
  }

  return {
    async check(repository, digest, verify) {
      // Answers hold for the root they were given under: a refreshed root (a CA added or dropped)
      // is checked against afresh, whether the digest was verified or refused before.
      const root = options.trustedRoot();
      if (resultsRoot !== root) {
        results.clear();
        resultsRoot = root;
      }
      const cacheKey = `${repository}@${digest}\n${createHash("sha256").update(JSON.stringify(verify)).digest("hex")}`;
      const cached = results.get(cacheKey);
      if (cached !== undefined && cached.until > now()) return cached.check;
      const check = await checkOnce(repository, digest, verify);
      // A verified digest is never fetched again. "Not signed" is remembered for a bounded time,
      // so unsigned candidates are not re-read every scan; a hint for the repository (the
      // signature's own push, docs/reliability.md) forgets it at once.
      results.delete(cacheKey);
      if (results.size >= SIGNATURE_LIMITS.cacheEntries) results.delete(results.keys().next().value!);
      results.set(cacheKey, {
        check,
        until: check.verified ? Number.POSITIVE_INFINITY : now() + unsignedTtlMs,
        repository,
      });
      return check;
    },
    invalidate(repository) {
      for (const [key, entry] of results)
        if (entry.repository === repository && !entry.check.verified) results.delete(key);
    },
  };
}

type Layer = { mediaType?: unknown; digest: string; annotations?: Record<string, unknown> };

/**
 * A Sigstore bundle (JSON form) for a legacy cosign layer: the certificate and Rekor entry from
 * the annotations when it was signed keyless, else a public-key hint the configured key answers.
 */
function legacyBundle(annotations: Record<string, unknown>, content: Record<string, unknown>): unknown {
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

function jsonOf(bytes: Buffer): Record<string, unknown> | undefined {
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
function inTotoStatement(
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
function signedDigest(payload: Buffer): string | undefined {
  const critical = (
    jsonOf(payload) as
      { critical?: { type?: unknown; image?: { "docker-manifest-digest"?: unknown } } } | undefined
  )?.critical;
  if (critical?.type !== COSIGN_PAYLOAD_TYPE) return undefined;
  const digest = critical.image?.["docker-manifest-digest"];
  return typeof digest === "string" ? digest : undefined;
}

function describeFindings(findings: Finding[], none: string): string {
  let best: Finding | undefined;
  for (const finding of findings) if (best === undefined || finding.priority > best.priority) best = finding;
  return best?.detail ?? none;
}
