import type { SecretRedactor } from "../core/redact.js";

/** Longer error texts are cut: a reply or log line is no place for a whole upstream answer. */
const MAX_ERROR_TEXT = 500;

/**
 * The one place an error becomes text for a comment, a check run, a status answer or a log line:
 * the error's own message on one line, capped, with every form of every secret Ferry holds
 * redacted (docs/security.md). Whether a bug's message may be shown at all is the caller's choice.
 */
export function errorText(error: unknown, secrets: SecretRedactor | undefined): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.replace(/[\r\n]+/g, " ").trim();
  const redacted = secrets ? secrets.redact(line) : line;
  return redacted.length > MAX_ERROR_TEXT ? `${redacted.slice(0, MAX_ERROR_TEXT - 1)}…` : redacted;
}
