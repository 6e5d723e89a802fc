import type { LookupFunction as NetLookupFunction } from "node:net";
import type { Agent, IncomingMessage, request as httpRequest } from "node:http";
import { nodeHttp, nodeHttps } from "../http/node-http.js";
import type { AnswerBody, AnswerHeaders, FetchAnswer, FetchLike } from "./fetch-types.js";
import type { Readable } from "node:stream";

/**
 * The subset of `fetch` the registry client and the notification sender use (docs/security.md,
 * "the address guard"), over node:http and node:https: a string body, headers as a record, a
 * signal, never a redirect followed (the callers follow by hand), the answer's status, headers
 * and body stream (fetch-types.ts). Its connections take `lookup` for every name and `refuse` is asked before every
 * request, so the guard sees the address actually connected to. Node's own HTTP parser is native:
 * no WebAssembly module is compiled (undici's llhttp kept a short command alive while V8 finished
 * compiling it in the background).
 */
export interface HttpFetchOptions {
  lookup: NetLookupFunction;
  /** An error when `hostname` (a name or an address literal) must not be contacted. */
  refuse: (hostname: string) => Error | undefined;
}

/** Statuses whose answer has no body by definition (the Fetch standard's null body statuses). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function httpFetch(options: HttpFetchOptions): FetchLike {
  const transports: Partial<Record<"http:" | "https:", Transport>> = {};
  return (input, init = {}) => {
    const url = new URL(input);
    if (url.protocol !== "http:" && url.protocol !== "https:")
      return Promise.reject(new TypeError(`fetch failed: ${url.protocol} is not http or https`));
    if (init.redirect !== undefined && init.redirect !== "manual")
      return Promise.reject(new TypeError(`fetch failed: redirect "${init.redirect}" is not supported`));
    const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const refused = options.refuse(hostname);
    if (refused) return Promise.reject(new TypeError("fetch failed", { cause: refused }));
    const method = (init.method ?? "GET").toUpperCase();
    return new Promise<FetchAnswer>((resolve, reject) => {
      const signal = init.signal;
      if (signal?.aborted) return reject(signal.reason);
      const protocol = url.protocol as "http:" | "https:";
      const { send, agent } = (transports[protocol] ??= transportFor(protocol));
      const request = send(url, {
        method,
        headers: {
          ...init.headers,
          ...(init.body !== undefined ? { "content-length": Buffer.byteLength(init.body) } : {}),
        },
        agent,
        lookup: options.lookup,
        ...(signal ? { signal } : {}),
      });
      request.on("error", (error) =>
        reject(signal?.aborted ? signal.reason : new TypeError("fetch failed", { cause: error })),
      );
      request.on("response", (incoming) => {
        try {
          resolve(responseOf(incoming, method, signal));
        } catch (error) {
          incoming.destroy();
          reject(new TypeError("fetch failed", { cause: error }));
        }
      });
      request.end(init.body);
    });
  };
}

interface Transport {
  send: typeof httpRequest;
  agent: Agent;
}

/**
 * node:http or node:https with one keep-alive agent each (a registry is asked several times per
 * image; idle sockets do not hold the process open), each loaded by the first request that needs
 * it: node:https brings TLS, about 4 ms of a short command's start-up against an http:// registry.
 * Taken without their ESM face (../http/node-http.ts).
 */
function transportFor(protocol: "http:" | "https:"): Transport {
  if (protocol === "http:") {
    const http = nodeHttp();
    return { send: http.request, agent: new http.Agent({ keepAlive: true }) };
  }
  const https = nodeHttps();
  return { send: https.request, agent: new https.Agent({ keepAlive: true }) };
}

function responseOf(incoming: IncomingMessage, method: string, signal: AbortSignal | undefined): FetchAnswer {
  const status = incoming.statusCode ?? 0;
  if (status < 200 || status > 599) throw new RangeError(`status ${status} is not a final answer`);
  const headers = new RawHeaders(incoming.rawHeaders);
  if (method === "HEAD" || NULL_BODY.has(status)) {
    incoming.resume();
    return { status, headers, body: null };
  }
  // As fetch does: a body the server compressed anyway is handed on decompressed (the caller's
  // size cap then counts the decompressed bytes and stops reading past it).
  const decoder = decoderFor(headers.get("content-encoding"));
  const stream: Readable = decoder ? incoming.pipe(decoder) : incoming;
  if (decoder) incoming.on("error", (error) => decoder.destroy(error));
  if (signal) {
    const abort = () => stream.destroy(signal.reason as Error);
    signal.addEventListener("abort", abort, { once: true });
    stream.once("close", () => signal.removeEventListener("abort", abort));
  }
  return { status, headers, body: bodyOf(stream) };
}

/**
 * The body as its readers read it (AnswerBody): the stream's chunks, an error or abort as a
 * rejected read. Not `Readable.toWeb`: Node's web streams were loaded for this alone, about 5 ms
 * of a short command's start-up (docs/capacity.md "Start-up").
 */
function bodyOf(stream: Readable): AnswerBody {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const cancel = (): Promise<void> => {
    stream.destroy();
    return Promise.resolve();
  };
  return {
    getReader: () => ({
      read: async () => {
        const next = await chunks.next();
        return next.done ? { done: true } : { done: false, value: next.value };
      },
      cancel,
    }),
    cancel,
  };
}

/**
 * An answer's headers as `Headers.get` reads them: names case-insensitive, repeated ones joined
 * by ", ". (Not the global `Headers`: it lives in Node's bundled undici, whose loading was a fifth
 * of a short command's start-up.)
 */
class RawHeaders implements AnswerHeaders {
  readonly #values = new Map<string, string>();
  constructor(raw: string[]) {
    for (let index = 0; index + 1 < raw.length; index += 2) {
      const name = raw[index]!.toLowerCase();
      const value = raw[index + 1]!.trim();
      const before = this.#values.get(name);
      this.#values.set(name, before === undefined ? value : `${before}, ${value}`);
    }
  }
  get(name: string): string | null {
    return this.#values.get(name.toLowerCase()) ?? null;
  }
}

/** zlib, loaded by the first answer that is compressed (docs/capacity.md "Start-up"). */
const zlib = (): typeof import("node:zlib") =>
  process.getBuiltinModule("node:zlib") as typeof import("node:zlib");

function decoderFor(encoding: string | null) {
  switch (encoding?.trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return zlib().createGunzip();
    case "deflate":
      return zlib().createInflate();
    case "br":
      return zlib().createBrotliDecompress();
    default:
      return undefined;
  }
}
