import { isIP } from "node:net";

/**
 * Hosts a public registry must never send us to (docs/reliability.md row 16): loopback, link-local
 * (cloud metadata at 169.254.169.254), RFC 1918 and unique-local addresses. Checked on literal
 * names only; names that resolve to such addresses are not caught here.
 */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || host === "metadata.google.internal") return true;
  if (isIP(host) === 4) {
    const [a, b] = host.split(".").map(Number) as [number, number];
    return (
      a === 127 ||
      a === 10 ||
      a === 0 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127)
    );
  }
  if (isIP(host) === 6) {
    return (
      host === "::1" ||
      host === "::" ||
      /^fe[89ab]/.test(host) ||
      /^f[cd]/.test(host) ||
      host.startsWith("::ffff:")
    );
  }
  return false;
}
