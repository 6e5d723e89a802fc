import { createHash } from "node:crypto";
import type { TrustedRoot } from "@sigstore/protobuf-specs";
import { predicateTypeOf, provenanceFacts, provenanceMismatch } from "../../core/policy/provenance.js";
import type { AttestationType, SignatureCheck, VerifyPolicy } from "../../core/policy/verify.js";
import {
  COSIGN_SIGN_PREDICATE_TYPE,
  inTotoStatement,
  signedDigest,
  SIGNATURE_LIMITS,
} from "./cosign-formats.js";
import {
  candidates,
  PRIORITY,
  referrersOnce,
  type Evidence,
  type Finding,
  type Source,
} from "./signature-evidence.js";
import { createSigstoreVerifier, type SigstoreVerifier } from "./sigstore-verify.js";

/**
 * Discovery of the cosign signatures and attestations of one image digest, over the registry
 * client's public methods (docs/security.md "Signed images"); every one found is verified by
 * sigstore-verify.ts. Places looked at (signature-evidence.ts), cheapest first, stopping at the first that
 * verifies:
 *
 * 1. cosign's legacy tags `sha256-<hex>.sig` (signatures) and `sha256-<hex>.att` (attestations)
 *    in the image's repository (cosign 2's default; what registries without the referrers API,
 *    e.g. CNCF distribution 2.8, hold),
 * 2. the OCI 1.1 referrers API `GET /v2/<name>/referrers/<digest>`
 *    (https://github.com/opencontainers/distribution-spec/blob/main/spec.md#listing-referrers),
 *    or, when that API is absent (404), the referrers tag schema `sha256-<hex>` holding an index
 *    (same section): cosign's OCI 1.1 signatures and Sigstore bundles (cosign 3's default).
 *
 * Formats (cosign-formats.ts, https://github.com/sigstore/cosign/blob/main/specs/SIGNATURE_SPEC.md): a legacy
 * signature layer is a "simple signing" JSON payload with its signature in the
 * `dev.cosignproject.cosign/signature` annotation (and, when keyless, the certificate and Rekor
 * bundle in `dev.sigstore.cosign/certificate` and `dev.sigstore.cosign/bundle`); a legacy
 * attestation layer is a DSSE envelope holding an in-toto statement; a Sigstore bundle
 * (https://github.com/sigstore/protobuf-specs) holds either. A signature binds the digest it
 * names (`critical.image.docker-manifest-digest`, or the in-toto statement's subject): a valid
 * signature of another image is not a signature of this one.
 */

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
  const ctx: CheckerContext = { source, trustedRoot: options.trustedRoot };
  let resultsRoot: TrustedRoot | undefined;

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
      const check = await checkOnce(ctx, repository, digest, verify);
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

/** What one check's steps share: the reads of the registry client and the verifier of the current root. */
interface CheckerContext {
  source: Source;
  trustedRoot: () => TrustedRoot;
  verifier?: { root: TrustedRoot; verifier: SigstoreVerifier };
}

/** The verifier for the current trusted root (a refresh swaps the root; the next check uses it). */
function sigstore(ctx: CheckerContext): SigstoreVerifier {
  const root = ctx.trustedRoot();
  if (ctx.verifier?.root !== root) ctx.verifier = { root, verifier: createSigstoreVerifier(root) };
  return ctx.verifier.verifier;
}

async function checkOnce(
  ctx: CheckerContext,
  repository: string,
  digest: string,
  verify: VerifyPolicy,
): Promise<SignatureCheck> {
  try {
    sigstore(ctx);
  } catch (error) {
    return { verified: false, reason: `no usable Sigstore trusted root: ${(error as Error).message}` };
  }
  const referrers = referrersOnce(ctx.source, repository, digest);
  const findings: Finding[] = [];
  let signedVia: string | undefined;
  for await (const evidence of candidates(ctx.source, repository, digest, ".sig", referrers, findings)) {
    if (verifyEvidence(ctx, evidence, digest, verify, {}, findings)) {
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
    for await (const evidence of candidates(
      ctx.source,
      repository,
      digest,
      ".att",
      referrers,
      attestationFindings,
    )) {
      if (verifyEvidence(ctx, evidence, digest, verify, { attestation }, attestationFindings)) {
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

/** Verifies one piece of evidence; `want` says what it must be bound to and carry. */
function verifyEvidence(
  ctx: CheckerContext,
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
  const outcome = sigstore(ctx).verify(evidence.bundle, evidence.artifact, verify, verify.tlog === true);
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

function describeFindings(findings: Finding[], none: string): string {
  let best: Finding | undefined;
  for (const finding of findings) if (best === undefined || finding.priority > best.priority) best = finding;
  return best?.detail ?? none;
}
