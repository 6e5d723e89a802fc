import type { SecretRedactor } from "../../core/redact.js";
import { RegistryAuthError, RegistryNotFoundError, RegistryProtocolError } from "./errors.js";
import type { Exchange, RegistryState } from "./transport.js";

/** GHCR denies private packages to installation tokens (they log in, but cannot pull). */
const GITHUB_APP_PACKAGES_HINT =
  "a GitHub App installation token can only pull public packages: for a private one use a personal access token (classic) with read:packages in a FERRY_REGISTRY_* variable (username + passwordEnv)";

/**
 * A registry's refusal as a typed error: 404 not found, 403 unauthorized, anything else a
 * protocol error, with the distribution error code and never the registry's own text.
 */
export function failFor(
  state: RegistryState,
  repository: string,
  what: string,
  response: Exchange,
  secrets: SecretRedactor,
): never {
  const code = distributionErrorCode(response.body);
  const message = secrets.redact(
    `${state.registry}/${repository}: ${what} answered HTTP ${response.status}${code ? ` (${code})` : ""}${response.status === 403 && state.config?.auth === "github" ? `; ${GITHUB_APP_PACKAGES_HINT}` : ""}`,
  );
  if (response.status === 404) throw new RegistryNotFoundError(message);
  if (response.status === 403) throw new RegistryAuthError(message);
  throw new RegistryProtocolError("registry-request-failed", message);
}

/**
 * The error code of a distribution error body when it is one the spec defines, else undefined.
 * The registry's own message is never copied: it is upstream text that may echo credentials
 * (a registry answering with the Authorization header it refused). Codes: the OCI distribution
 * spec, "Error Codes" (https://github.com/opencontainers/distribution-spec/blob/main/spec.md#error-codes).
 */
const DISTRIBUTION_ERROR_CODES = new Set([
  "BLOB_UNKNOWN",
  "BLOB_UPLOAD_INVALID",
  "BLOB_UPLOAD_UNKNOWN",
  "DIGEST_INVALID",
  "MANIFEST_BLOB_UNKNOWN",
  "MANIFEST_INVALID",
  "MANIFEST_UNKNOWN",
  "MANIFEST_UNVERIFIED",
  "NAME_INVALID",
  "NAME_UNKNOWN",
  "SIZE_INVALID",
  "TAG_INVALID",
  "UNAUTHORIZED",
  "DENIED",
  "UNSUPPORTED",
  "TOOMANYREQUESTS",
]);

export function distributionErrorCode(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { errors?: { code?: unknown }[] };
    const code = parsed.errors?.[0]?.code;
    return typeof code === "string" && DISTRIBUTION_ERROR_CODES.has(code) ? code : undefined;
  } catch {
    return undefined;
  }
}
