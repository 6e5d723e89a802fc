import { classifyHost } from "../../core/net-address.js";

/**
 * Hosts a public registry must never send us to (docs/reliability.md row 16): loopback, link-local
 * (cloud metadata at 169.254.169.254), RFC 1918 and unique-local addresses, in any spelling.
 * Names are judged after DNS by the address guard (address-guard.ts).
 */
export function isPrivateHost(hostname: string): boolean {
  const kind = classifyHost(hostname);
  return kind !== undefined && kind !== "public";
}
