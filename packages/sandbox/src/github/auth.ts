/**
 * Credentials as GitHub checks them: app JWTs (RS256, verified against the app's public key,
 * with GitHub's iat/exp rules), installation tokens with an expiry and the installation's
 * permissions, and personal tokens.
 */
import { createPublicKey, generateKeyPairSync, randomBytes, verify, type KeyObject } from "node:crypto";
import { ApiError } from "./router.js";

export function generateAppKeyPair(): { privateKeyPem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    privateKeyPem: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
    publicKey: createPublicKey(publicKey.export({ type: "spki", format: "pem" })),
  };
}

/** A token in GitHub's format: a kind prefix (`ghp_`, `ghs_`) and 36 random characters. */
export function newToken(prefix: "ghp" | "ghs"): string {
  return `${prefix}_${randomBytes(27).toString("base64url").slice(0, 36)}`;
}

export function looksLikeJwt(token: string): boolean {
  return /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);
}

const badJwt = (why: string) => new ApiError(401, `'${why}' A JSON web token could not be decoded`);

/**
 * Verifies an app JWT and returns its issuer (the app id or client id). GitHub requires RS256,
 * `iat` not in the future (60 s of drift allowed), `exp` in the future and at most 10 minutes
 * after `iat`.
 */
export function verifyAppJwt(
  token: string,
  keyFor: (issuer: string) => KeyObject | undefined,
  nowMs: number,
): string {
  const [headerPart, payloadPart, signaturePart] = token.split(".") as [string, string, string];
  let header: { alg?: string };
  let payload: { iat?: number; exp?: number; iss?: string | number };
  try {
    header = JSON.parse(Buffer.from(headerPart, "base64url").toString("utf8"));
    payload = JSON.parse(Buffer.from(payloadPart, "base64url").toString("utf8"));
  } catch {
    throw badJwt("unreadable");
  }
  if (header.alg !== "RS256") throw badJwt("alg");
  if (payload.iss === undefined) throw badJwt("Issuer claim");
  const issuer = String(payload.iss);
  const key = keyFor(issuer);
  if (!key) throw new ApiError(401, "Integration not found");
  const signed = verify(
    "RSA-SHA256",
    Buffer.from(`${headerPart}.${payloadPart}`),
    key,
    Buffer.from(signaturePart, "base64url"),
  );
  if (!signed) throw badJwt("signature");
  const now = Math.floor(nowMs / 1000);
  if (typeof payload.iat !== "number" || typeof payload.exp !== "number") throw badJwt("claims");
  if (payload.iat > now + 60)
    throw new ApiError(401, "'Issued at' claim ('iat') must be an Integer representing a time in the past.");
  if (payload.exp <= now)
    throw new ApiError(
      401,
      "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires.",
    );
  if (payload.exp - payload.iat > 600)
    throw new ApiError(401, "'Expiration time' claim ('exp') is too far in the future");
  return issuer;
}
