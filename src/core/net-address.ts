/**
 * Which kind of network an address belongs to, for the registry client's address guard
 * (docs/security.md): every spelling of an IPv4 address that `inet_aton` and URL parsers accept
 * (`127.1`, `0x7f.0.0.1`, `0177.0.0.1`, `2130706433`), IPv6 in any form, and IPv4 carried inside
 * IPv6 (mapped `::ffff:a.b.c.d`, translated `::ffff:0:a.b.c.d`, compatible `::a.b.c.d`, NAT64
 * `64:ff9b::/96` and the local-use `64:ff9b:1::/48`, 6to4 `2002::/16`, Teredo `2001::/32`): an
 * IPv6 address is as refused as the IPv4 address it carries.
 * Ranges: IANA special-purpose registries, RFC 6890 (https://www.rfc-editor.org/rfc/rfc6890).
 */

/**
 * link-local includes cloud metadata endpoints, also those outside 169.254/16; `loopback`
 * includes the unspecified address.
 */
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

/**
 * Cloud metadata services at addresses outside 169.254/16, refused like link-local: Azure's
 * WireServer 168.63.129.16 (a public address, reachable from every Azure VM) and Alibaba Cloud's
 * 100.100.100.200 (in the shared 100.64/10, so it would pass with private registries allowed).
 */
const METADATA_ADDRESSES = new Set([ipv4(168, 63, 129, 16), ipv4(100, 100, 100, 200)]);

function ipv4(a: number, b: number, c: number, d: number): number {
  return a * 2 ** 24 + b * 2 ** 16 + c * 2 ** 8 + d;
}

/** From the least to the most refused: the stricter of two classes is the later one. */
const STRICTNESS: AddressClass[] = ["public", "private", "loopback", "link-local"];

function strictest(...classes: AddressClass[]): AddressClass {
  return classes.reduce((a, b) => (STRICTNESS.indexOf(b) > STRICTNESS.indexOf(a) ? b : a));
}

function classifyIPv4(address: number): AddressClass {
  const a = Math.floor(address / 2 ** 24);
  const b = Math.floor(address / 2 ** 16) & 0xff;
  if ((a === 169 && b === 254) || METADATA_ADDRESSES.has(address)) return "link-local";
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
  const v4At = (offset: number, indexes = [offset, offset + 1, offset + 2, offset + 3]) =>
    ((bytes[indexes[0]!]! << 24) >>> 0) +
    (bytes[indexes[1]!]! << 16) +
    (bytes[indexes[2]!]! << 8) +
    bytes[indexes[3]!]!;
  const zeros = (from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);
  /** The IPv4 address in the given four bytes (RFC 6052 skips byte 8 of a NAT64 address). */
  const v4Of = (indexes: number[]) => classifyIPv4(v4At(0, indexes));
  // ::ffff:a.b.c.d (mapped), ::ffff:0:a.b.c.d (translated, RFC 2765), ::a.b.c.d (compatible),
  // 64:ff9b::a.b.c.d (NAT64), 2002:AABB:CCDD:: (6to4)
  if (zeros(0, 10) && word(5) === 0xffff) return classifyIPv4(v4At(12));
  if (zeros(0, 8) && word(4) === 0xffff && word(5) === 0) return classifyIPv4(v4At(12));
  if (zeros(0, 12)) {
    if (bytes[15] === 1 && zeros(12, 15)) return "loopback";
    return classifyIPv4(v4At(12));
  }
  if (word(0) === 0x64 && word(1) === 0xff9b && zeros(4, 12)) return classifyIPv4(v4At(12));
  if (word(0) === 0x2002) return classifyIPv4(v4At(2));
  // 64:ff9b:1::/48, NAT64 for local use (RFC 8215): its operator picks a prefix of /48 to /96,
  // so the IPv4 address may sit at any of RFC 6052's places for those. Metadata at any of them
  // is refused; the prefix is not global in any case.
  if (word(0) === 0x64 && word(1) === 0xff9b && word(2) === 0x0001) {
    const places = [
      [6, 7, 9, 10],
      [7, 9, 10, 11],
      [9, 10, 11, 12],
      [12, 13, 14, 15],
    ];
    return places.some((place) => v4Of(place) === "link-local") ? "link-local" : "private";
  }
  // Teredo (RFC 4380): the server's IPv4 address, and the client's with every bit inverted.
  if (word(0) === 0x2001 && word(1) === 0)
    return strictest("public", v4Of([4, 5, 6, 7]), classifyIPv4(~v4At(0, [12, 13, 14, 15]) >>> 0));
  // AWS's instance metadata over IPv6 sits in the unique-local range: still metadata.
  if (word(0) === 0xfd00 && word(1) === 0x0ec2) return "link-local";
  if ((word(0) & 0xffc0) === 0xfe80) return "link-local";
  if ((word(0) & 0xfe00) === 0xfc00 || (word(0) & 0xffc0) === 0xfec0 || bytes[0] === 0xff) return "private";
  return "public";
}
