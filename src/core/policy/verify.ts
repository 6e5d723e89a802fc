import * as z from "zod";

/**
 * Signature policy (`verify:` in a tag policy; docs/security.md "Signed images"): a tag is
 * eligible only when its digest carries a Sigstore signature from the key or the keyless identity
 * the config names, and, when asked, a SLSA provenance attestation from the named builder for the
 * image's source repository. Pure: the adapter verifies the signatures with the Sigstore libraries
 * and hands the result in as data (`SignatureCheck`); the policy core only decides.
 */

/** PEM public keys are a few hundred bytes; anything this large is not one. */
export const MAX_PUBLIC_KEY_PEM_BYTES = 8 * 1024;
const PEM_PUBLIC_KEY = /^\s*-----BEGIN PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PUBLIC KEY-----\s*$/;

/**
 * The attestation types `cosign attest --type` writes, by the in-toto predicate type they carry
 * (https://github.com/sigstore/cosign/blob/main/doc/cosign_attest.md).
 */
export const ATTESTATION_PREDICATE_TYPES = {
  slsaprovenance: "https://slsa.dev/provenance/v0.2",
  slsaprovenance02: "https://slsa.dev/provenance/v0.2",
  slsaprovenance1: "https://slsa.dev/provenance/v1",
} as const;
export type AttestationType = keyof typeof ATTESTATION_PREDICATE_TYPES;

export const verifySchema = z
  .strictObject({
    key: z
      .string()
      .optional()
      .describe(
        "PEM public key (cosign.pub) the image's cosign signature must verify with, written in the config repo as a block scalar.",
      ),
    issuer: z
      .string()
      .max(500)
      .optional()
      .describe(
        "Keyless: the OIDC issuer of the signing certificate, e.g. https://token.actions.githubusercontent.com.",
      ),
    subject: z
      .string()
      .max(500)
      .optional()
      .describe(
        "Keyless: the certificate identity; * matches any characters, e.g. https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/*.",
      ),
    tlog: z
      .boolean()
      .optional()
      .describe(
        "Require a transparency log (Rekor) entry verified against the trusted root; true by default for keyless, false for key.",
      ),
    attestations: z
      .array(z.enum(Object.keys(ATTESTATION_PREDICATE_TYPES) as [AttestationType, ...AttestationType[]]))
      .max(4)
      .optional()
      .describe(
        "Attestations the digest must also carry, signed by the same key or identity: slsaprovenance (v0.2) or slsaprovenance1.",
      ),
    builder: z
      .string()
      .max(500)
      .optional()
      .describe("With attestations: the SLSA builder id the provenance must name; * matches any characters."),
    name: z
      .string()
      .max(100)
      .optional()
      .describe('How the signer is named in reasons, e.g. "acme/shop release key".'),
  })
  .superRefine((verify, ctx) => {
    for (const problem of verifyProblems(verify)) ctx.addIssue({ code: "custom", ...problem });
  });

export type VerifyInput = z.infer<typeof verifySchema>;

/** Who must have signed: a key pair, or a keyless (Fulcio) certificate identity. */
export type Signer = { key: string } | { issuer: string; subject: string };

/** A resolved signature policy. */
export type VerifyPolicy = Signer & {
  name?: string;
  /** A verified transparency log entry is required. */
  tlog?: boolean;
  attestations?: AttestationType[];
  /** Glob of the SLSA builder id (with attestations). */
  builder?: string;
  /** `https://github.com/<image source>`: the repository the provenance must name. */
  source?: string;
};

export function verifyProblems(verify: VerifyInput): { path: string[]; message: string }[] {
  const problems: { path: string[]; message: string }[] = [];
  const keyless = verify.issuer !== undefined || verify.subject !== undefined;
  if (keyless && verify.key !== undefined)
    problems.push({ path: ["key"], message: "verify takes key or issuer/subject (keyless), not both" });
  if (keyless) {
    if (verify.issuer === undefined)
      problems.push({ path: ["issuer"], message: "keyless verify needs issuer (the OIDC issuer URL)" });
    else if (!/^https:\/\/\S+$/.test(verify.issuer))
      problems.push({ path: ["issuer"], message: "issuer must be an https:// URL" });
    if (verify.subject === undefined)
      problems.push({
        path: ["subject"],
        message: "keyless verify needs subject (the certificate identity)",
      });
    else if (verify.subject.trim() === "" || /^\**$/.test(verify.subject))
      problems.push({ path: ["subject"], message: "subject must name an identity, not match every one" });
  } else if (verify.key === undefined) {
    problems.push({ path: ["key"], message: "verify needs key (a PEM public key) or issuer and subject" });
  } else if (verify.key.length > MAX_PUBLIC_KEY_PEM_BYTES) {
    problems.push({ path: ["key"], message: `key is larger than ${MAX_PUBLIC_KEY_PEM_BYTES} bytes` });
  } else if (!PEM_PUBLIC_KEY.test(verify.key)) {
    problems.push({
      path: ["key"],
      message: "key must be a PEM public key (-----BEGIN PUBLIC KEY----- … -----END PUBLIC KEY-----)",
    });
  }
  if (verify.attestations !== undefined && verify.attestations.length > 0 && verify.builder === undefined)
    problems.push({
      path: ["builder"],
      message: "attestations need builder (the SLSA builder id the provenance must name)",
    });
  if (verify.builder !== undefined && (verify.attestations ?? []).length === 0)
    problems.push({ path: ["builder"], message: "builder applies only with attestations" });
  return problems;
}

/** The resolved policy, or undefined when the input is not usable (reported by the schema). */
export function resolveVerify(input: VerifyInput | undefined, source?: string): VerifyPolicy | undefined {
  if (input === undefined || verifyProblems(input).length > 0) return undefined;
  const signer: Signer =
    input.key !== undefined ? { key: input.key } : { issuer: input.issuer!, subject: input.subject! };
  const policy: VerifyPolicy = { ...signer };
  if (input.name !== undefined) policy.name = input.name;
  const tlog = input.tlog ?? input.key === undefined;
  if (tlog) policy.tlog = true;
  if (input.attestations !== undefined && input.attestations.length > 0) {
    policy.attestations = [...new Set(input.attestations)];
    policy.builder = input.builder!;
    if (source !== undefined) policy.source = `https://github.com/${source}`;
  }
  return policy;
}

/** What the adapter found for one digest under one `VerifyPolicy`. */
export type SignatureCheck = { verified: true; via: string } | { verified: false; reason: string };

const GITHUB_WORKFLOW_IDENTITY =
  /^https:\/\/github\.com\/([^/]+\/[^/]+)\/\.github\/workflows\/([^/@*]+?)\.ya?ml@/;

/** How the signer is named in reasons: its name, "acme/shop's release workflow", or the identity. */
export function describeSigner(verify: VerifyPolicy, keyId?: string): string {
  if (verify.name !== undefined) return verify.name;
  if ("subject" in verify) {
    const workflow = GITHUB_WORKFLOW_IDENTITY.exec(verify.subject);
    return workflow !== null ? `${workflow[1]}'s ${workflow[2]} workflow` : verify.subject;
  }
  return keyId !== undefined ? `key ${keyId}` : "the configured key";
}

/** The one-line reason a tag is not eligible: "1.9.1 not signed by acme/shop's release workflow (…)". */
export function notSignedReason(tag: string, verify: VerifyPolicy, detail: string): string {
  return `${tag} not signed by ${describeSigner(verify)} (${detail})`;
}
