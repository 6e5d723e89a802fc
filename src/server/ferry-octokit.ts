import { ProbotOctokit } from "probot";

/** At most this many retries of one request on rate limits (docs/reliability.md rows 21, G6): deferred, never a hot loop. */
const MAX_RATE_LIMIT_RETRIES = 3;

/**
 * Production Octokit: Probot's throttling (which honours `retry-after` and the rate-limit reset)
 * and retry plugins, with bounded retries instead of Probot's retry-forever default.
 */
export const FerryOctokit = ProbotOctokit.defaults((options: Record<string, unknown>) => ({
  ...options,
  retry: { retries: 3, ...(options.retry as object | undefined) },
  throttle: {
    // Probot passes its own handlers here (its secondary-limit one never retries): ours go last.
    ...(options.throttle as object | undefined),
    onRateLimit: (_retryAfter: number, _request: unknown, _octokit: unknown, retryCount: number) =>
      retryCount < MAX_RATE_LIMIT_RETRIES,
    onSecondaryRateLimit: (_retryAfter: number, _request: unknown, _octokit: unknown, retryCount: number) =>
      retryCount < MAX_RATE_LIMIT_RETRIES,
  },
}));
