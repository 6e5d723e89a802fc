/**
 * Which kind of network an address belongs to, for the registry client's address guard
 * (docs/security.md): every spelling of an IPv4 address that `inet_aton` and URL parsers accept
 * (`127.1`, `0x7f.0.0.1`, `0177.0.0.1`, `2130706433`), IPv6 in any form, and IPv4 carried inside
 * IPv6 (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`).
 * Ranges: IANA special-purpose registries, RFC 6890 (https://www.rfc-editor.org/rfc/rfc6890).
 */

/** link-local includes cloud metadata endpoints; `loopback` includes the unspecified address. */
export type AddressClass = "link-local" | "loopback" | "private" | "public";

/** Hostnames of cloud metadata services that are not addresses. */
const METADATA_NAMES = new Set([
  "metadata.google.internal",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
]);

/**
 * The class of `host` (a hostname or an address literal, brackets allowed), or undefined for a
 * DNS name that must be resolved first (then classify each address it resolves to).
 */
export function classifyHost(host: string): AddressClass | undefined {
  const bare = host
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
  if (METADATA_NAMES.has(bare)) return "link-local";
  if (bare === "localhost" || bare.endsWith(".localhost")) return "loopback";
  const v4 = parseIPv4(bare);
  if (v4 !== undefined) return classifyIPv4(v4);
  const v6 = parseIPv6(bare.replace(/%.*$/, ""));
  if (v6 !== undefined) return classifyIPv6(v6);
  return undefined;
}

/** An IPv4 address as a 32-bit number, in any form inet_aton accepts; undefined otherwise. */
export function parseIPv4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length < 1 || parts.length > 4) return undefined;
  const numbers: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : parseInt(part.slice(2), 16);
    else if (/^0[0-7]+$/.test(part)) value = parseInt(part, 8);
    else if (/^(0|[1-9][0-9]*)$/.test(part)) value = Number(part);
    else return undefined;
    if (!Number.isFinite(value)) return undefined;
    numbers.push(value);
  }
  const last = numbers.pop()!;
  if (numbers.some((value) => value > 255)) return undefined;
  if (last >= 2 ** (8 * (4 - numbers.length))) return undefined;
  let result = 0;
  numbers.forEach((value, index) => (result += value * 2 ** (24 - 8 * index)));
  return result + last;
}

/** An IPv6 address as 16 bytes (an embedded dotted IPv4 tail allowed); undefined otherwise. */
export function parseIPv6(text: string): number[] | undefined {
  if (!text.includes(":") || !/^[0-9a-f:.]+$/i.test(text)) return undefined;
  let hex = text;
  const dotted = /(?<=:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted.slice(1).map(Number);
    if (parts.some((part) => part > 255)) return undefined;
    const high = ((parts[0]! << 8) | parts[1]!).toString(16);
    const low = ((parts[2]! << 8) | parts[3]!).toString(16);
    hex = `${text.slice(0, dotted.index)}${high}:${low}`;
  }
  if (hex.includes(".")) return undefined;
  const halves = hex.split("::");
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === "") return [];
    const values = part.split(":");
    if (values.some((value) => !/^[0-9a-f]{1,4}$/i.test(value))) return undefined;
    return values.map((value) => parseInt(value, 16));
  };
  const left = groups(halves[0]!);
  const right = halves.length === 2 ? groups(halves[1]!) : [];
  if (!left || !right) return undefined;
  const fixed = left.length + right.length;
  if (halves.length === 2 ? fixed > 7 : fixed !== 8) return undefined;
  const words = [...left, ...Array<number>(8 - fixed).fill(0), ...right];
  return words.flatMap((word) => [word >> 8, word & 0xff]);
}

function classifyIPv4(address: number): AddressClass {
  const a = Math.floor(address / 2 ** 24);
  const b = Math.floor(address / 2 ** 16) & 0xff;
  if (a === 169 && b === 254) return "link-local";
  if (a === 127 || a === 0) return "loopback";
  if (
    a === 10 ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 192 && b === 0 && (Math.floor(address / 256) & 0xff) === 0) ||
    a >= 224
  )
    return "private";
  return "public";
}

function classifyIPv6(bytes: number[]): AddressClass {
  const word = (index: number) => (bytes[index * 2]! << 8) | bytes[index * 2 + 1]!;
  const v4At = (offset: number) =>
    ((bytes[offset]! << 24) >>> 0) +
    (bytes[offset + 1]! << 16) +
    (bytes[offset + 2]! << 8) +
    bytes[offset + 3]!;
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), 64:ff9b::a.b.c.d (NAT64), 2002:AABB:CCDD:: (6to4)
  if (zeros(0, 10) && word(5) === 0xffff) return classifyIPv4(v4At(12));
  if (zeros(0, 12)) {
    if (bytes[15] === 1 && zeros(12, 15)) return "loopback";
    return classifyIPv4(v4At(12));
  }
  if (word(0) === 0x64 && word(1) === 0xff9b && zeros(4, 12)) return classifyIPv4(v4At(12));
  if (word(0) === 0x2002) return classifyIPv4(v4At(2));
  // AWS's instance metadata over IPv6 sits in the unique-local range: still metadata.
  if (word(0) === 0xfd00 && word(1) === 0x0ec2) return "link-local";
  if ((word(0) & 0xffc0) === 0xfe80) return "link-local";
  if ((word(0) & 0xfe00) === 0xfc00 || (word(0) & 0xffc0) === 0xfec0 || bytes[0] === 0xff) return "private";
  return "public";
}
