/**
 * GitHub's secondary rate limits on content-creating requests, per installation: "No more than 80
 * content-generating requests per minute and no more than 500 content-generating requests per hour
 * are allowed" (GitHub REST docs, "Rate limits for the REST API" → "About secondary rate limits",
 * https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits).
 * Over either, github.com answers 403 with the secondary-rate-limit message and a `retry-after`
 * header (seconds), which the docs tell clients to honour. Off unless a test asks for it. A test
 * may give the clock the windows are read on (default the wall clock): one it shares with the code
 * under test slides them without waiting a real minute.
 */
import { ApiError } from "./router.js";

export interface ContentLimits {
  perMinute: number;
  perHour: number;
}

export const GITHUB_CONTENT_LIMITS: ContentLimits = { perMinute: 80, perHour: 500 };

export const SECONDARY_LIMIT_MESSAGE =
  "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.";

/** A content-creating request: a REST write, or a GraphQL mutation (queries only read). */
export function isContentCreating(method: string, pathname: string, body: Record<string, unknown>): boolean {
  if (pathname === "/graphql") return method === "POST" && /^\s*mutation\b/.test(String(body.query ?? ""));
  return method === "POST" || method === "PUT" || method === "PATCH" || method === "DELETE";
}

export class ContentCreationLimits {
  #limits: ContentLimits | undefined;
  #now: (() => number) | undefined;
  /** Accepted content-creating requests' times (epoch ms), per installation, for the last hour. */
  readonly #accepted = new Map<number, number[]>();
  #refused = 0;

  /**
   * From now on, refuse what github.com refuses (default: its 80 a minute and 500 an hour), counted
   * on `now` (epoch ms) when given instead of the request's arrival time.
   */
  enforce(limits: ContentLimits = GITHUB_CONTENT_LIMITS, now?: () => number): void {
    this.#limits = limits;
    this.#now = now;
  }

  /** Requests refused so far with the secondary limit. */
  get refused(): number {
    return this.#refused;
  }

  /** Records one content-creating request of `installation`, or throws GitHub's 403 when over a limit. */
  take(installation: number, arrivedAt: number): void {
    const limits = this.#limits;
    if (!limits) return;
    const nowMs = this.#now ? this.#now() : arrivedAt;
    const times = (this.#accepted.get(installation) ?? []).filter((at) => at > nowMs - 3_600_000);
    this.#accepted.set(installation, times);
    const lastMinute = times.filter((at) => at > nowMs - 60_000);
    let waitMs = 0;
    if (lastMinute.length >= limits.perMinute)
      waitMs = lastMinute[lastMinute.length - limits.perMinute]! + 60_000 - nowMs;
    if (times.length >= limits.perHour)
      waitMs = Math.max(waitMs, times[times.length - limits.perHour]! + 3_600_000 - nowMs);
    if (waitMs > 0) {
      this.#refused++;
      throw new ApiError(403, SECONDARY_LIMIT_MESSAGE, undefined, {
        "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))),
      });
    }
    times.push(nowMs);
  }

  clear(): void {
    this.#limits = undefined;
    this.#now = undefined;
    this.#accepted.clear();
    this.#refused = 0;
  }
}
