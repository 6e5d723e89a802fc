import type { AnswerHeaders } from "./fetch-types.js";

/**
 * How long a registry asked us to wait, from the headers of a 429 (or 503) answer:
 * `Retry-After` in seconds or as an HTTP date, then Docker Hub's `ratelimit-reset` (epoch
 * seconds) and `ratelimit-remaining: 0;w=21600` (the window, in seconds). docs/reliability.md row 17.
 */
export function retryAfterMs(headers: AnswerHeaders, nowMs: number): number | undefined {
  const retryAfter = headers.get("retry-after")?.trim();
  if (retryAfter) {
    if (/^\d+$/.test(retryAfter)) return Number(retryAfter) * 1000;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - nowMs);
  }
  const reset = headers.get("ratelimit-reset")?.trim() ?? headers.get("x-ratelimit-reset")?.trim();
  if (reset && /^\d+$/.test(reset)) {
    const value = Number(reset);
    // Epoch seconds when large, delta seconds otherwise (both are seen in the wild).
    return value > 1_000_000_000 ? Math.max(0, value * 1000 - nowMs) : value * 1000;
  }
  const remaining = parseRateLimitRemaining(headers.get("ratelimit-remaining"));
  if (remaining && remaining.remaining <= 0 && remaining.windowSeconds !== undefined)
    return remaining.windowSeconds * 1000;
  return undefined;
}

/** Requests of a registry's announced budget Ferry leaves to people (a `docker pull` while debugging). */
export const RATE_LIMIT_RESERVE = 2;

/** `ratelimit-remaining: 76;w=21600` → { remaining: 76, windowSeconds: 21600 }. */
export function parseRateLimitRemaining(
  value: string | null | undefined,
): { remaining: number; windowSeconds?: number } | undefined {
  if (!value) return undefined;
  const match = /^\s*(\d+)\s*(?:;\s*w\s*=\s*(\d+))?/.exec(value);
  if (!match) return undefined;
  const result: { remaining: number; windowSeconds?: number } = { remaining: Number(match[1]) };
  if (match[2] !== undefined) result.windowSeconds = Number(match[2]);
  return result;
}
