import {
  lookup as dnsLookup,
  type LookupAddress,
  type LookupAllOptions,
  type LookupOneOptions,
} from "node:dns";
import type { Agent } from "undici";
import { classifyHost, type AddressClass } from "../../core/net-address.js";
import { RegistryProtocolError } from "./errors.js";

/**
 * The registry client's address guard, applied where a connection is made (docs/security.md):
 * every name is checked after DNS, every address literal before connecting, on the registry, on
 * each redirect and on each token realm alike. Link-local addresses (cloud metadata) are always
 * refused; loopback and private ones when `refusePrivate` (production). The hook is undici's
 * `connect` option (https://undici.nodejs.org/#/docs/api/Connector), which hands `lookup` on to
 * `net.connect`/`tls.connect`.
 */

export type LookupFunction = typeof dnsLookup;

/** A connection Ferry refused to make; never retried. */
export class AddressRefusedError extends RegistryProtocolError {
  constructor(message: string) {
    super("registry-address-refused", message);
  }
}

/** Why connecting to `host` is refused, or undefined when it may be contacted. */
export function addressProblem(host: string, refusePrivate: boolean): string | undefined {
  const kind = classifyHost(host);
  return refusedKind(kind, refusePrivate) ? `${host} is a ${describe(kind!)} address` : undefined;
}

function refusedKind(kind: AddressClass | undefined, refusePrivate: boolean): boolean {
  return kind === "link-local" || (refusePrivate && (kind === "loopback" || kind === "private"));
}

function describe(kind: AddressClass): string {
  return kind === "link-local" ? "link-local" : "private or loopback";
}

/** dns.lookup that fails when any address a name resolves to is refused. */
export function guardedLookup(base: LookupFunction, refusePrivate: boolean): LookupFunction {
  const guarded = (
    hostname: string,
    options: LookupOneOptions | LookupAllOptions | number,
    callback: (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ): void => {
    const lookupOptions = typeof options === "number" ? { family: options } : options;
    base(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      const refused = list.find((entry) => refusedKind(classifyHost(entry.address), refusePrivate));
      if (refused)
        return callback(
          new AddressRefusedError(
            `${hostname} resolves to ${refused.address}, a ${describe(classifyHost(refused.address)!)} address; refused`,
          ) as unknown as NodeJS.ErrnoException,
          [],
        );
      if ((lookupOptions as LookupAllOptions).all) return callback(null, list);
      const first = list[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), []);
      callback(null, first.address, first.family);
    });
  };
  return guarded as unknown as LookupFunction;
}

/**
 * A fetch whose connections pass the guard: names through `lookup`, literals before connecting.
 * undici is loaded at the first request, so a command that reads no registry never loads it.
 */
export function guardedFetch(options: { lookup?: LookupFunction; refusePrivate: boolean }): typeof fetch {
  let ready: Promise<{ dispatcher: Agent; fetch: typeof import("undici").fetch }> | undefined;
  const load = async () => {
    // Node gives a CommonJS package's exports by name and as `default`; the bundled CLI
    // (deploy/bundle-cli.mjs) gives them as `default` only.
    const loaded = await import("undici");
    const { Agent, buildConnector, fetch } =
      "buildConnector" in loaded ? loaded : (loaded as { default: typeof loaded }).default;
    const connector = buildConnector({
      lookup: guardedLookup(options.lookup ?? dnsLookup, options.refusePrivate),
    });
    const dispatcher = new Agent({
      connect: (connectOptions, callback) => {
        const problem = addressProblem(connectOptions.hostname, options.refusePrivate);
        if (problem) return callback(new AddressRefusedError(`${problem}; refused`), null);
        return connector(connectOptions, callback);
      },
    });
    return { dispatcher, fetch };
  };
  return (async (input: string | URL, init?: RequestInit) => {
    const { dispatcher, fetch } = await (ready ??= load());
    return fetch(input, { ...(init as object), dispatcher });
  }) as unknown as typeof fetch;
}

/** The guard's refusal inside a fetch failure (undici reports connect errors as their `cause`). */
export function refusedCause(error: unknown): AddressRefusedError | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth += 1) {
    if (current instanceof AddressRefusedError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
