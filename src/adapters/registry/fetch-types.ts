/**
 * What the registry client and the notification sender ask of a fetch, and read of its answer
 * (docs/security.md "Addresses"): the guarded fetch (http-fetch.ts) gives exactly this, and a
 * WHATWG `fetch` and its `Response` fit it too, so tests may script either.
 */
export interface FetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Redirects are followed by hand, never by the fetch. */
  redirect?: "manual";
  signal?: AbortSignal;
}

/** A header lookup: the value, several joined by ", ", or null. Names are case-insensitive. */
export interface AnswerHeaders {
  get(name: string): string | null;
}

export interface FetchAnswer {
  status: number;
  headers: AnswerHeaders;
  /** Null for HEAD and for 204, 205 and 304 answers. */
  body: ReadableStream<Uint8Array> | null;
}

export type FetchLike = (input: string | URL, init?: FetchInit) => Promise<FetchAnswer>;
