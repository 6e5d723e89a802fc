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

/** What the readers take of a body: a reader's chunks, and a way to drop the rest. A WHATWG `ReadableStream` is one. */
export interface AnswerBody {
  getReader(): {
    read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>;
    cancel(): Promise<void>;
  };
  cancel(): Promise<void>;
}

export interface FetchAnswer {
  status: number;
  headers: AnswerHeaders;
  /** Null for HEAD and for 204, 205 and 304 answers. */
  body: AnswerBody | null;
}

export type FetchLike = (input: string | URL, init?: FetchInit) => Promise<FetchAnswer>;
