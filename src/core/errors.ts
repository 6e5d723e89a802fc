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
 * rate-limit or server status (an Octokit RequestError after Octokit's own retries: 429, 5xx).
 */
export function mayPassOnRetry(error: unknown): boolean {
  if (isTransientError(error)) return true;
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === "number" && (status === 429 || status >= 500);
}
