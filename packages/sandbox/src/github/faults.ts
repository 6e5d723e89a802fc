/**
 * Faults on demand, so tests can see how a client copes with GitHub's bad days: primary and
 * secondary rate limits with real headers, 5xx bursts, latency, read-after-write 404s and a
 * rival writer that moves a ref just before the client's compare-and-swap.
 */
import { ContentCreationLimits } from "./content-limits.js";
import { ApiError } from "./router.js";

export interface RateLimitFault {
  kind: "primary" | "secondary";
  /** How many requests fail (default 1). */
  count?: number;
  /** Seconds until the limit lifts (default 60); null sends a secondary limit without `retry-after`, as GitHub sometimes does. */
  retryAfterSeconds?: number | null;
  /** Primary limits answer 403 by default, as GitHub mostly does; 429 is also seen. */
  status?: 403 | 429;
  /** Only requests whose `METHOD /path` contains this string (or matches this regex). */
  route?: string | RegExp;
}

export interface ServerErrorFault {
  status?: number;
  count?: number;
  /** Only requests whose `METHOD /path` contains this string (or matches this regex). */
  route?: string | RegExp;
}

interface Armed<T> {
  fault: T;
  remaining: number;
}

export class Faults {
  private rateLimits: Armed<RateLimitFault>[] = [];
  private serverErrors: Armed<ServerErrorFault>[] = [];
  private delayMs = 0;
  /** Misses each resource created while armed answers before it "replicates". */
  private freshReads = 0;
  private readonly freshKeys = new Map<string, number>();
  private refRaces: Armed<{ ref?: string }>[] = [];
  private unknownMergeability = 0;
  private failingMergeGroups = 0;
  /** GitHub's secondary limits on content-creating requests, once `contentLimits.enforce()` is called. */
  readonly contentLimits = new ContentCreationLimits();

  rateLimit(fault: RateLimitFault): void {
    this.rateLimits.push({ fault, remaining: fault.count ?? 1 });
  }

  serverError(fault: ServerErrorFault = {}): void {
    this.serverErrors.push({ fault, remaining: fault.count ?? 1 });
  }

  latency(ms: number): void {
    this.delayMs = ms;
  }

  /** From now on, the first `count` GETs of each thing created answer 404, like a lagging replica. */
  eventualConsistency(options: { count?: number } = {}): void {
    this.freshReads = options.count ?? 1;
    this.freshKeys.clear();
  }

  /** The next `count` ref updates (optionally of one ref, e.g. `heads/ferry/staging`) lose a race to another writer. */
  refRace(options: { ref?: string; count?: number } = {}): void {
    this.refRaces.push({ fault: { ref: options.ref }, remaining: options.count ?? 1 });
  }

  /** The next `count` PR reads answer `mergeable: null, mergeable_state: "unknown"`, as while GitHub computes it. */
  mergeabilityPending(options: { count?: number } = {}): void {
    this.unknownMergeability = options.count ?? 1;
  }

  /** Whether this PR read should show mergeability still being computed (and consumes one). */
  takeMergeabilityPending(): boolean {
    if (this.unknownMergeability <= 0) return false;
    this.unknownMergeability--;
    return true;
  }

  /** The simulated CI fails on the next `count` merge groups a merge queue builds (a flaky or broken build there). */
  failMergeGroups(options: { count?: number } = {}): void {
    this.failingMergeGroups = options.count ?? 1;
  }

  /** Whether the merge group being built should fail its CI (and consumes one). */
  takeFailedMergeGroup(): boolean {
    if (this.failingMergeGroups <= 0) return false;
    this.failingMergeGroups--;
    return true;
  }

  clear(): void {
    this.contentLimits.clear();
    this.failingMergeGroups = 0;
    this.unknownMergeability = 0;
    this.rateLimits = [];
    this.serverErrors = [];
    this.delayMs = 0;
    this.freshReads = 0;
    this.freshKeys.clear();
    this.refRaces = [];
  }

  get latencyMs(): number {
    return this.delayMs;
  }

  /** Throws the armed rate-limit or server error for this request, if any. */
  beforeRequest(method: string, path: string, nowMs: number): void {
    const key = `${method} ${path}`;
    const limit = this.rateLimits.find((x) => x.remaining > 0 && routeMatches(x.fault.route, key));
    if (limit) {
      limit.remaining--;
      const seconds = limit.fault.retryAfterSeconds === undefined ? 60 : limit.fault.retryAfterSeconds;
      if (limit.fault.kind === "secondary") {
        throw new ApiError(
          limit.fault.status ?? 403,
          "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.",
          undefined,
          seconds === null ? {} : { "retry-after": String(seconds) },
        );
      }
      throw new ApiError(limit.fault.status ?? 403, "API rate limit exceeded for installation.", undefined, {
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": String(Math.ceil(nowMs / 1000) + (seconds ?? 60)),
      });
    }
    const error = this.serverErrors.find((x) => x.remaining > 0 && routeMatches(x.fault.route, key));
    if (error) {
      error.remaining--;
      const status = error.fault.status ?? 502;
      throw new ApiError(
        status,
        status === 502 ? "Server Error" : status === 503 ? "Service Unavailable" : "Internal Server Error",
      );
    }
  }

  /** Records something created while eventual consistency is armed. */
  created(key: string): void {
    if (this.freshReads > 0) this.freshKeys.set(key, this.freshReads);
  }

  /** Whether a GET of `key` should miss (and consumes one miss). */
  missFresh(key: string): boolean {
    const left = this.freshKeys.get(key) ?? 0;
    if (left <= 0) return false;
    this.freshKeys.set(key, left - 1);
    return true;
  }

  /** Whether a rival should move `ref` right now (and consumes one race). */
  takeRefRace(ref: string): boolean {
    const race = this.refRaces.find(
      (x) => x.remaining > 0 && (x.fault.ref === undefined || x.fault.ref === ref),
    );
    if (!race) return false;
    race.remaining--;
    return true;
  }
}

function routeMatches(route: string | RegExp | undefined, key: string): boolean {
  return route === undefined || (typeof route === "string" ? key.includes(route) : route.test(key));
}
