import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The signature on a generic webhook's body, as GitHub signs its own (`X-Hub-Signature-256:
 * sha256=<hex HMAC-SHA256 of the body>`), under Ferry's names (docs/config.md "Notifications").
 */
export const SIGNATURE_HEADER = "x-ferry-signature-256";
export const DELIVERY_HEADER = "x-ferry-delivery";
export const EVENT_HEADER = "x-ferry-event";

export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`;
}

/** Whether `header` is the signature of `body` under `secret` (constant time): what a receiver checks. */
export function signatureMatches(secret: string, body: string, header: string | undefined): boolean {
  if (header === undefined) return false;
  const expected = Buffer.from(signBody(secret, body));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
