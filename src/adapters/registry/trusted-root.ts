import { lookup as dnsLookup } from "node:dns";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { TrustedRoot } from "@sigstore/protobuf-specs";
import { classifyHost } from "../../core/net-address.js";
import { AddressRefusedError, addressProblem, guardedLookup, type LookupFunction } from "./address-guard.js";

/**
 * The Sigstore trusted root keyless signatures are verified against (the Fulcio CAs, Rekor and CT
 * log keys, timestamp authorities; format: https://github.com/sigstore/protobuf-specs
 * `TrustedRoot`). Three sources, chosen by the operator, never by a config repo:
 *
 * - shipped: the public-good root that `@sigstore/tuf` carries as its TUF seed (no network; it
 *   moves with the package version),
 * - a file (`FERRY_SIGSTORE_TRUSTED_ROOT`): a private Sigstore deployment's root, or one
 *   refreshed out of band,
 * - refreshed: `@sigstore/tuf` fetches the current root through TUF from the Sigstore mirror,
 *   verifying the metadata chain from the shipped TUF root (https://docs.sigstore.dev/about/security/).
 */

/** A trusted root JSON is a few tens of kilobytes. */
export const MAX_TRUSTED_ROOT_BYTES = 1024 * 1024;

export class TrustedRootError extends Error {
  override name = "TrustedRootError";
}

/** The public-good root shipped inside @sigstore/tuf's seed. */
export function shippedTrustedRoot(): TrustedRoot {
  const require = createRequire(import.meta.url);
  const seeds = require("@sigstore/tuf/seeds.json") as Record<string, { targets?: Record<string, string> }>;
  const encoded = Object.values(seeds)[0]?.targets?.["trusted_root.json"];
  if (encoded === undefined) throw new TrustedRootError("@sigstore/tuf ships no trusted_root.json");
  return parseTrustedRoot(Buffer.from(encoded, "base64").toString("utf8"), "@sigstore/tuf seed");
}

/** Parses a trusted root JSON, with a one-line error naming where it came from. */
export function parseTrustedRoot(text: string, from: string): TrustedRoot {
  if (text.length > MAX_TRUSTED_ROOT_BYTES)
    throw new TrustedRootError(`${from}: trusted root is larger than ${MAX_TRUSTED_ROOT_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TrustedRootError(`${from}: trusted root is not JSON (${(error as Error).message})`);
  }
  // Required here, not imported: a process that checks no signature never loads the codecs.
  const { TrustedRoot: codec } = createRequire(import.meta.url)(
    "@sigstore/protobuf-specs",
  ) as typeof import("@sigstore/protobuf-specs");
  const root = codec.fromJSON(json);
  if (root.certificateAuthorities.length === 0 && root.tlogs.length === 0)
    throw new TrustedRootError(
      `${from}: trusted root names no certificate authority and no transparency log`,
    );
  return root;
}

export function readTrustedRootFile(path: string): TrustedRoot {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new TrustedRootError(
      `cannot read the trusted root ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
  return parseTrustedRoot(text, path);
}

/** The TUF mirror of the public-good Sigstore instance (`@sigstore/tuf` ships its TUF root). */
export const PUBLIC_GOOD_TUF_MIRROR = "https://tuf-repo-cdn.sigstore.dev";

export interface TrustedRootRefreshOptions {
  /** Where the TUF client keeps the metadata it has verified (the root it trusts next time). */
  cachePath: string;
  /** Default the public-good instance. */
  mirrorURL?: string;
  /** The TUF root.json to start from; required for any mirror but the public-good one. */
  rootPath?: string;
  /** Per request; default 30 s. */
  timeoutMs?: number;
  /** DNS for the mirror's address check (default node:dns). */
  lookup?: LookupFunction;
}

/**
 * Why the mirror must not be contacted: a link-local or cloud metadata address, written as a
 * literal or what its name resolves to (the registry client's rule, address-guard.ts). The TUF
 * client makes its own connections, so the name is checked just before it starts.
 */
async function mirrorAddressProblem(mirror: string, lookup: LookupFunction): Promise<string | undefined> {
  let host: string;
  try {
    host = new URL(mirror).hostname;
  } catch {
    return undefined; // the TUF client says the URL is invalid
  }
  const literal = addressProblem(host, false);
  if (literal !== undefined || classifyHost(host) !== undefined) return literal;
  return new Promise((resolve) =>
    guardedLookup(lookup, false)(host, { all: true }, (error) =>
      resolve(error instanceof AddressRefusedError ? error.message.replace(/; refused$/, "") : undefined),
    ),
  );
}

/**
 * The current root through TUF (`@sigstore/tuf`, https://theupdateframework.io/): root, timestamp,
 * snapshot and targets metadata are verified (signatures, versions, expiry) from the starting TUF
 * root, and the `trusted_root.json` target must match the length and hashes the signed targets
 * metadata give. Sizes are bounded by tuf-js (metadata: 512 kB root, 16 kB timestamp, 2 MB
 * snapshot, 5 MB targets) and by {@link MAX_TRUSTED_ROOT_BYTES} here. Returns the root and the
 * verified JSON text as served.
 */
export async function refreshTrustedRoot(
  options: TrustedRootRefreshOptions,
): Promise<{ root: TrustedRoot; json: string }> {
  const mirror = options.mirrorURL ?? PUBLIC_GOOD_TUF_MIRROR;
  const from = `TUF mirror ${displayUrl(mirror)}`;
  if (options.rootPath === undefined && mirror.replace(/\/+$/, "") !== PUBLIC_GOOD_TUF_MIRROR)
    throw new TrustedRootError(`${from}: a TUF root.json to start from is required for this mirror`);
  const refused = await mirrorAddressProblem(mirror, options.lookup ?? dnsLookup);
  if (refused !== undefined) throw new TrustedRootError(`${from}: ${refused}; refused`);
  // Loaded only when asked: the TUF client and its HTTP stack are not needed to verify.
  const { initTUF } = await import("@sigstore/tuf");
  let json: string;
  try {
    const client = await initTUF({
      cachePath: options.cachePath,
      mirrorURL: mirror,
      ...(options.rootPath !== undefined ? { rootPath: options.rootPath } : {}),
      timeout: options.timeoutMs ?? 30_000,
      retry: false,
    });
    json = await client.getTarget("trusted_root.json");
  } catch (error) {
    throw new TrustedRootError(`${from}: ${reason(error)}`);
  }
  return { root: parseTrustedRoot(json, `${from} trusted_root.json`), json };
}

/** The error and its causes on one line (TUFError wraps the tuf-js error that says why). */
function reason(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e instanceof Error && parts.length < 4; e = e.cause)
    parts.push(e.message.replace(/\s+/g, " "));
  return parts.length > 0 ? parts.join(": ") : String(error);
}

/** A URL without credentials, query or fragment, for messages and logs. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`.replace(/\/+$/, "");
  } catch {
    return "(invalid URL)";
  }
}

/** Where the operator's settings point: a file, else the shipped root. */
export function trustedRootFromEnv(env: Record<string, string | undefined>): TrustedRoot {
  const path = env.FERRY_SIGSTORE_TRUSTED_ROOT;
  return path !== undefined && path !== "" ? readTrustedRootFile(path) : shippedTrustedRoot();
}
