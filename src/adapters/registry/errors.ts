import { TransientError, UserError } from "../../core/errors.js";

/**
 * Registry failures, sorted by what the caller should do (docs/architecture.md "Errors"). Messages name the
 * registry and repository but never carry credentials or tokens (docs/reliability.md row 25).
 */

/** Credentials missing or refused, also after one re-authentication (docs/reliability.md row 20). */
export class RegistryAuthError extends UserError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("registry-unauthorized", message, options);
  }
}

/** The repository, tag or digest does not exist. */
export class RegistryNotFoundError extends UserError {
  constructor(message: string) {
    super("registry-not-found", message);
  }
}

/**
 * The registry answered something Ferry refuses to act on: malformed JSON, a manifest over the
 * cap, a wrong Content-Type, a digest that does not match the body, a pagination loop, more tags
 * than the cap (never a truncated list), a realm or redirect to a host that may not be trusted.
 */
export class RegistryProtocolError extends UserError {
  constructor(code: string, message: string) {
    super(code, message);
  }
}

/** Rate limited (429), 5xx, timeouts or the registry's circuit is open: retry after `retryAfterMs`. */
export class RegistryUnavailableError extends TransientError {
  readonly registry: string;
  constructor(
    code: string,
    registry: string,
    message: string,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(code, message, options);
    this.registry = registry;
  }
}
