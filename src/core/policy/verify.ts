import { z } from "zod";

/**
 * Signature policy (`verify:` in a tag policy; docs/security.md): a tag is eligible only when its
 * digest carries a cosign signature from the key the config names. Pure: the adapter checks the
 * signatures and hands the result in as data (`SignatureCheck`), the policy core only decides.
 */

/** PEM public keys are a few hundred bytes; anything this large is not one. */
export const MAX_PUBLIC_KEY_PEM_BYTES = 8 * 1024;
const PEM_PUBLIC_KEY = /^\s*-----BEGIN PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PUBLIC KEY-----\s*$/;

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
      .optional()
      .describe(
        "Keyless: the OIDC issuer of the signing certificate, e.g. https://token.actions.githubusercontent.com (not available yet).",
      ),
    subject: z
      .string()
      .optional()
      .describe(
        "Keyless: the certificate identity, e.g. https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/* (not available yet).",
      ),
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

/** A resolved signature policy: key-based only for now. */
export interface VerifyPolicy {
  key: string;
  name?: string;
}

export function verifyProblems(verify: VerifyInput): { path: string[]; message: string }[] {
  const problems: { path: string[]; message: string }[] = [];
  if (verify.issuer !== undefined || verify.subject !== undefined) {
    problems.push({
      path: [verify.issuer !== undefined ? "issuer" : "subject"],
      message:
        "keyless verification (issuer/subject) is not available yet: sign with a key pair and set verify.key",
    });
  }
  if (verify.key === undefined) {
    if (verify.issuer === undefined && verify.subject === undefined)
      problems.push({ path: ["key"], message: "verify needs key (a PEM public key)" });
  } else if (verify.key.length > MAX_PUBLIC_KEY_PEM_BYTES) {
    problems.push({ path: ["key"], message: `key is larger than ${MAX_PUBLIC_KEY_PEM_BYTES} bytes` });
  } else if (!PEM_PUBLIC_KEY.test(verify.key)) {
    problems.push({
      path: ["key"],
      message: "key must be a PEM public key (-----BEGIN PUBLIC KEY----- … -----END PUBLIC KEY-----)",
    });
  }
  return problems;
}

/** The resolved policy, or undefined when the input is not usable (reported by the schema). */
export function resolveVerify(input: VerifyInput | undefined): VerifyPolicy | undefined {
  if (input?.key === undefined) return undefined;
  return input.name !== undefined ? { key: input.key, name: input.name } : { key: input.key };
}

/** What the adapter found for one digest under one `VerifyPolicy`. */
export type SignatureCheck = { verified: true; via: string } | { verified: false; reason: string };

/** How the signer is named in reasons. */
export function describeSigner(verify: VerifyPolicy, keyId?: string): string {
  if (verify.name !== undefined) return verify.name;
  return keyId !== undefined ? `key ${keyId}` : "the configured key";
}

/** The one-line reason a tag is not eligible: "1.9.1 not signed by acme/shop release key (…)". */
export function notSignedReason(tag: string, verify: VerifyPolicy, detail: string): string {
  return `${tag} not signed by ${describeSigner(verify)} (${detail})`;
}
