import type { ServerResponse } from "node:http";

/**
 * Error codes of the OCI distribution spec (plus the few CNCF distribution adds), with the HTTP
 * status distribution answers them with. Body shape: `{"errors":[{"code","message","detail"}]}`.
 */
export const REGISTRY_ERRORS = {
  BLOB_UNKNOWN: { status: 404, message: "blob unknown to registry" },
  BLOB_UPLOAD_INVALID: { status: 400, message: "blob upload invalid" },
  BLOB_UPLOAD_UNKNOWN: { status: 404, message: "blob upload unknown to registry" },
  DIGEST_INVALID: { status: 400, message: "provided digest did not match uploaded content" },
  MANIFEST_BLOB_UNKNOWN: { status: 400, message: "blob unknown to registry" },
  MANIFEST_INVALID: { status: 400, message: "manifest invalid" },
  MANIFEST_UNKNOWN: { status: 404, message: "manifest unknown" },
  NAME_INVALID: { status: 400, message: "invalid repository name" },
  NAME_UNKNOWN: { status: 404, message: "repository name not known to registry" },
  PAGINATION_NUMBER_INVALID: { status: 400, message: "invalid number of results requested" },
  RANGE_INVALID: { status: 416, message: "invalid content range" },
  SIZE_INVALID: { status: 400, message: "provided length did not match content length" },
  TAG_INVALID: { status: 400, message: "manifest tag did not match URI" },
  UNAUTHORIZED: { status: 401, message: "authentication required" },
  DENIED: { status: 403, message: "requested access to the resource is denied" },
  UNSUPPORTED: { status: 405, message: "The operation is unsupported." },
  TOOMANYREQUESTS: { status: 429, message: "too many requests" },
} as const;

export type RegistryErrorCode = keyof typeof REGISTRY_ERRORS;

/** Thrown inside a route handler; the server turns it into the spec's error body. */
export class RegistryHttpError extends Error {
  readonly code: RegistryErrorCode;
  readonly detail: unknown;
  readonly status: number;
  readonly headers: Record<string, string>;
  constructor(
    code: RegistryErrorCode,
    options: { message?: string; detail?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(options.message ?? REGISTRY_ERRORS[code].message);
    this.code = code;
    this.status = REGISTRY_ERRORS[code].status;
    this.detail = options.detail;
    this.headers = options.headers ?? {};
  }
}

export function sendRegistryError(res: ServerResponse, error: RegistryHttpError, isHead: boolean): void {
  const body = JSON.stringify({
    errors: [{ code: error.code, message: error.message, detail: error.detail ?? null }],
  });
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.statusCode = error.status;
  res.end(isHead ? undefined : body);
}

/**
 * Answers distribution's HTTP router gives before any handler runs, as plain text: a path that
 * matches no route (including names and references outside the grammar) and a method the route
 * does not serve.
 */
export class PlainHttpError extends Error {
  constructor(
    readonly status: number,
    readonly text: string,
  ) {
    super(text.trim());
  }
}

export const pageNotFound = () => new PlainHttpError(404, "404 page not found\n");
export const methodNotAllowed = () => new PlainHttpError(405, "Method not allowed\n");
