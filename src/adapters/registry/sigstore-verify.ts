import { createPublicKey, type KeyObject } from "node:crypto";
import { bundleFromJSON, type Bundle } from "@sigstore/bundle";
import type { TrustedRoot } from "@sigstore/protobuf-specs";
import {
  PolicyError,
  toSignedEntity,
  toTrustMaterial,
  VerificationError,
  Verifier,
  type TrustMaterial,
} from "@sigstore/verify";
import { compileGlob } from "../../core/patterns/glob.js";
import type { Signer } from "../../core/policy/verify.js";

/**
 * The one place a signature is checked: every signature and attestation Ferry finds, whatever
 * way the registry stores it, is turned into a Sigstore bundle and verified by `@sigstore/verify`
 * (https://github.com/sigstore/sigstore-js/tree/main/packages/verify) against the trusted root
 * (trusted-root.ts), with the configured key or keyless identity as the policy. No cryptography
 * is written here.
 *
 * Thresholds (docs/security.md "Signed images"):
 * - key: the configured key, no certificate; a transparency log entry only when `tlog` is set;
 * - keyless: the certificate must chain to a Fulcio CA of the trusted root at a verified time,
 *   carry a signed certificate timestamp (SCT) from a CT log of the root, and match the issuer
 *   and subject; with `tlog` (the default) a Rekor entry whose inclusion (signed entry timestamp
 *   or inclusion proof) verifies against the root's log keys gives that time; without it an
 *   RFC 3161 timestamp from one of the root's timestamp authorities must.
 */

/** Why a bundle did not verify, in words for a reason line. */
export type BundleOutcome = { ok: true } | { ok: false; problem: BundleProblem; detail: string };
export type BundleProblem = "signature" | "identity" | "chain" | "tlog" | "timestamp" | "malformed";

/** The hint under which a bundle Ferry assembles from a key-signed cosign artifact names its key. */
export const CONFIGURED_KEY_HINT = "ferry-configured-key";

export interface SigstoreVerifier {
  verify(bundle: Bundle, artifact: Buffer | undefined, signer: Signer, tlog: boolean): BundleOutcome;
}

export function createSigstoreVerifier(trustedRoot: TrustedRoot): SigstoreVerifier {
  let keyless: TrustMaterial | undefined;
  const byKey = new Map<string, TrustMaterial | Error>();

  function materialFor(signer: Signer): TrustMaterial | Error {
    if (!("key" in signer)) return (keyless ??= toTrustMaterial(trustedRoot));
    let material = byKey.get(signer.key);
    if (material === undefined) {
      let key: KeyObject | Error;
      try {
        key = createPublicKey(signer.key);
      } catch (error) {
        key = new Error(`the configured key is not a usable public key: ${(error as Error).message}`);
      }
      // Whatever hint a bundle carries, the only key that can verify it is the configured one.
      material =
        key instanceof Error
          ? key
          : toTrustMaterial(trustedRoot, () => ({ publicKey: key, validFor: () => true }));
      if (byKey.size >= 64) byKey.clear();
      byKey.set(signer.key, material);
    }
    return material;
  }

  return {
    verify(bundle, artifact, signer, tlog) {
      const material = materialFor(signer);
      if (material instanceof Error) return { ok: false, problem: "malformed", detail: material.message };
      const keyless = !("key" in signer);
      const verifier = new Verifier(material, {
        tlogThreshold: tlog ? 1 : 0,
        ctlogThreshold: keyless ? 1 : 0,
        timestampThreshold: keyless || tlog ? 1 : 0,
      });
      if (tlog && bundle.verificationMaterial.tlogEntries.length === 0)
        return {
          ok: false,
          problem: "tlog",
          detail: "it carries no transparency log (Rekor) entry, which verify.tlog requires",
        };
      let entity;
      try {
        entity = toSignedEntity(bundle, artifact);
      } catch (error) {
        return { ok: false, problem: "malformed", detail: `unusable bundle: ${(error as Error).message}` };
      }
      // @sigstore/verify would test the subject as a JavaScript RegExp, which backtracks: it checks
      // the issuer only, and the subject is matched here on the one pattern engine (RE2).
      const policy = keyless ? { extensions: { issuer: signer.issuer } } : undefined;
      try {
        const identity = verifier.verify(entity, policy).identity;
        if (keyless && !subjectMatches(signer.subject, identity?.subjectAlternativeName))
          return signedBySomeoneElse(identity);
        return { ok: true };
      } catch (error) {
        if (error instanceof PolicyError && keyless) {
          // Verified, but by someone else: name who, so the reason says what was found.
          return signedBySomeoneElse(verifier.verify(entity).identity);
        }
        if (error instanceof VerificationError) return describeError(error, keyless);
        return { ok: false, problem: "malformed", detail: (error as Error).message };
      }
    },
  };
}

/** The certificate's identity against the configured subject (`*` any run of characters). */
function subjectMatches(subject: string, identity: string | undefined): boolean {
  return identity !== undefined && compileGlob(subject, "wildcard").test(identity);
}

type Identity = ReturnType<Verifier["verify"]>["identity"];

/** A verified signature by another identity than the configured one: name who. */
function signedBySomeoneElse(identity: Identity): BundleOutcome {
  return {
    ok: false,
    problem: "identity",
    detail: `signed by ${identity?.subjectAlternativeName ?? "an unnamed identity"} (issuer ${identity?.extensions?.issuer ?? "unknown"})`,
  };
}

function describeError(error: VerificationError, keyless: boolean): BundleOutcome {
  switch (error.code) {
    case "SIGNATURE_ERROR":
      return {
        ok: false,
        problem: "signature",
        detail: keyless
          ? "a signature was found but does not verify with its certificate"
          : "a signature was found but does not verify with the key",
      };
    case "CERTIFICATE_ERROR":
      return {
        ok: false,
        problem: "chain",
        detail: `its certificate is not trusted: ${error.message}`,
      };
    case "TIMESTAMP_ERROR":
      return {
        ok: false,
        problem: "timestamp",
        detail: `no verified time for its certificate: ${error.message}`,
      };
    case "PUBLIC_KEY_ERROR":
      return { ok: false, problem: "signature", detail: error.message };
    default:
      return {
        ok: false,
        problem: "tlog",
        detail: `its transparency log entry does not verify: ${error.message}`,
      };
  }
}

/** A bundle from its JSON, or the one-line reason it is not one. */
export function parseBundle(json: unknown): Bundle | Error {
  try {
    return bundleFromJSON(json);
  } catch (error) {
    const fields = (error as { fields?: unknown }).fields;
    return new Error(
      `not a Sigstore bundle: ${(error as Error).message}${Array.isArray(fields) ? ` (${fields.slice(0, 4).join(", ")})` : ""}`,
    );
  }
}
