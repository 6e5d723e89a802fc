import {
  lookup as dnsLookup,
  type LookupAddress,
  type LookupAllOptions,
  type LookupOneOptions,
} from "node:dns";
import type { LookupFunction as NetLookupFunction } from "node:net";
import { classifyHost, type AddressClass } from "../../core/net-address.js";
import { RegistryProtocolError } from "./errors.js";
import type { FetchLike } from "./fetch-types.js";
import { httpFetch } from "./http-fetch.js";

/**
 * The registry client's address guard, applied where a connection is made (docs/security.md):
 * every name is checked after DNS, every address literal before connecting, on the registry, on
 * each redirect and on each token realm alike. Link-local addresses (cloud metadata) are always
 * refused; loopback and private ones when `refusePrivate` (production). `lookup` is handed to
 * `net.connect`/`tls.connect` for every new connection (http-fetch.ts), so the address checked is
 * the one connected to.
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

/** A fetch whose connections pass the guard: names through `lookup`, literals before each request. */
export function guardedFetch(options: { lookup?: LookupFunction; refusePrivate: boolean }): FetchLike {
  return httpFetch({
    lookup: guardedLookup(options.lookup ?? dnsLookup, options.refusePrivate) as unknown as NetLookupFunction,
    refuse: (hostname) => {
      const problem = addressProblem(hostname, options.refusePrivate);
      return problem ? new AddressRefusedError(`${problem}; refused`) : undefined;
    },
  });
}

/** The guard's refusal inside a fetch failure (a failed fetch carries the connect error as its `cause`). */
export function refusedCause(error: unknown): AddressRefusedError | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth += 1) {
    if (current instanceof AddressRefusedError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
