/** The bounds every part of the registry client works within (transport, tag lists, manifests), and their defaults. */

export interface RegistryLimits {
  /** More tags than this is an error, never a truncated list (docs/reliability.md row 18). */
  maxTags: number;
  maxPages: number;
  /** Wall-clock cap on one tag walk. */
  listTimeoutMs: number;
  /** `n` sent on tags/list. */
  pageSize: number;
  maxManifestBytes: number;
  maxConfigBytes: number;
  maxTagPageBytes: number;
  requestTimeoutMs: number;
  /** Retries after a 5xx, network error or timeout (so maxRetries + 1 attempts). */
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  maxRedirects: number;
  /** Default budget when `registries.<host>.requestsPerMinute` is not set. */
  requestsPerMinute: number;
  /** Waiting for the budget longer than this fails with a TransientError instead. */
  maxBudgetWaitMs: number;
  /** Default when `registries.<host>.concurrency` is not set. */
  concurrency: number;
  /** Back-off after a 429 that names no time. */
  defaultBackoffMs: number;
  /** How long a tag list is reused; 0 disables the shared cache. */
  tagCacheTtlMs: number;
}

export const DEFAULT_REGISTRY_LIMITS: RegistryLimits = {
  maxTags: 200_000,
  maxPages: 5_000,
  listTimeoutMs: 120_000,
  pageSize: 1000,
  maxManifestBytes: 4 * 1024 * 1024,
  maxConfigBytes: 8 * 1024 * 1024,
  maxTagPageBytes: 64 * 1024 * 1024,
  requestTimeoutMs: 30_000,
  maxRetries: 3,
  retryBaseMs: 500,
  retryMaxMs: 10_000,
  maxRedirects: 3,
  requestsPerMinute: 600,
  maxBudgetWaitMs: 10_000,
  concurrency: 8,
  defaultBackoffMs: 60_000,
  tagCacheTtlMs: 60_000,
};
