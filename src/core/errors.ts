/**
 * Typed errors, sorted by what the catcher should do with them (docs/architecture.md "Errors"):
 * - UserError: the user can fix it (config, policy, file, input); report it, never retry.
 * - TransientError: a dependency failed in a way that may pass (429, 5xx, timeout); retry with backoff.
 * - anything else is a bug and is thrown as is.
 */
export class FerryError extends Error {
  /** A stable machine-readable code, e.g. `invalid-tag`. */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Input the user can fix: invalid config, policy, image reference, tag or file. Never retried. */
export class UserError extends FerryError {}

/** A failure that may pass on retry: rate limits, 5xx, timeouts, network resets. */
export class TransientError extends FerryError {
  /** When the dependency said we may retry (from Retry-After or a rate-limit reset header). */
  readonly retryAfterMs?: number;
  constructor(code: string, message: string, options?: { cause?: unknown; retryAfterMs?: number }) {
    super(code, message, options);
    if (options?.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}

export function isUserError(error: unknown): error is UserError {
  return error instanceof UserError;
}

export function isTransientError(error: unknown): error is TransientError {
  return error instanceof TransientError;
}

/**
 * May the same work pass if tried again? A TransientError, or an HTTP error that carries a
 * rate-limit or server status (an Octokit RequestError after Octokit's own retries: 429, 5xx, or
 * GitHub's 403 rate limit).
 */
export function mayPassOnRetry(error: unknown): boolean {
  if (isTransientError(error)) return true;
  const status = httpStatus(error);
  return status !== undefined && (status === 429 || status >= 500 || isRateLimitRefusal(error));
}

/**
 * GitHub answers an exceeded rate limit with 429 or with 403 (docs/reliability.md row 21): a 403
 * is one when it carries `retry-after`, `x-ratelimit-remaining: 0`, or a message naming a rate
 * limit ("You have exceeded a secondary rate limit…", "API rate limit exceeded…"). Any other 403
 * is a permission refusal, final.
 */
export function isRateLimitRefusal(error: unknown): boolean {
  const status = httpStatus(error);
  if (status === 429) return true;
  if (status !== 403) return false;
  const response = (error as { response?: { headers?: unknown; data?: unknown } }).response;
  const headers = (response?.headers ?? {}) as Record<string, unknown>;
  if (headers["retry-after"] !== undefined || String(headers["x-ratelimit-remaining"]) === "0") return true;
  const message = (response?.data as { message?: unknown } | undefined)?.message;
  return typeof message === "string" && /rate limit/i.test(message);
}

/**
 * How long a failure asks to wait before a retry, in ms: a TransientError's own figure, or an HTTP
 * error's `retry-after` (seconds) or, with `x-ratelimit-remaining: 0`, `x-ratelimit-reset` (epoch
 * seconds, against `nowMs`).
 */
export function askedRetryDelayMs(error: unknown, nowMs: number): number | undefined {
  if (isTransientError(error)) return error.retryAfterMs;
  const headers = ((error as { response?: { headers?: unknown } } | null)?.response?.headers ?? {}) as Record<
    string,
    unknown
  >;
  const after = Number(headers["retry-after"]);
  if (headers["retry-after"] !== undefined && Number.isFinite(after) && after >= 0) return after * 1000;
  // Every answer names the window's reset; only an exhausted window asks to wait for it.
  const reset = Number(headers["x-ratelimit-reset"]);
  if (String(headers["x-ratelimit-remaining"]) === "0" && Number.isFinite(reset))
    return Math.max(0, reset * 1000 - nowMs);
  return undefined;
}

/**
 * GitHub's refusal to open a second PR from a branch that has an open one: 422 "A pull request
 * already exists for owner:branch." (docs/reliability.md row 80).
 */
export function isPullExistsRefusal(error: unknown): boolean {
  return (
    httpStatus(error) === 422 && /A pull request already exists/i.test((error as Error | null)?.message ?? "")
  );
}

function httpStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === "number" ? status : undefined;
}
