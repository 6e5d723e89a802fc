/**
 * Keeps one person's comment commands from spending the installation's API budget (GitHub allows
 * an installation 5,000 requests an hour: https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api).
 * A token bucket per person and repository admits a burst of commands and then one every
 * `refillMs`; a command that ran (not refused) gives its token back, so people with access are
 * never slowed by their own work. When the bucket is empty the person is muted for `muteMs`: the
 * first command past the limit gets one reply saying so, the rest get nothing at all.
 * The map is bounded: the least recently seen person goes first.
 */
export interface CommandFloodGuardOptions {
  /** Commands admitted at once (default 5). */
  burst?: number;
  /** One more command admitted every this many ms (default 60 s). */
  refillMs?: number;
  /** How long a flooding person is ignored (default 10 minutes). */
  muteMs?: number;
  /** People tracked at once (default 10,000). */
  maxEntries?: number;
  now?: () => number;
}

/** `run`: handle the comment; `warn`: reply once that further commands are ignored; `ignore`: do nothing. */
export type FloodDecision = "run" | "warn" | "ignore";

interface Bucket {
  tokens: number;
  at: number;
  mutedUntil: number;
}

export class CommandFloodGuard {
  readonly muteMs: number;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly buckets = new Map<string, Bucket>();

  constructor(options: CommandFloodGuardOptions = {}) {
    this.burst = options.burst ?? 5;
    this.refillMs = options.refillMs ?? 60_000;
    this.muteMs = options.muteMs ?? 10 * 60_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? (() => Date.now());
  }

  /** Takes a token for one comment with commands by `login` in `repository`. */
  admit(repository: string, login: string): FloodDecision {
    const key = `${repository}:${login.toLowerCase()}`;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now, mutedUntil: 0 };
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    while (this.buckets.size > this.maxEntries) this.buckets.delete(this.buckets.keys().next().value!);
    if (now < bucket.mutedUntil) return "ignore";
    bucket.tokens = Math.min(this.burst, bucket.tokens + Math.floor((now - bucket.at) / this.refillMs));
    bucket.at = now - ((now - bucket.at) % this.refillMs);
    if (bucket.tokens > 0) {
      bucket.tokens--;
      return "run";
    }
    bucket.mutedUntil = now + this.muteMs;
    return "warn";
  }

  /** Gives the token back: the command ran, so it was not flooding. */
  refund(repository: string, login: string): void {
    const bucket = this.buckets.get(`${repository}:${login.toLowerCase()}`);
    if (bucket && bucket.mutedUntil <= this.now()) bucket.tokens = Math.min(this.burst, bucket.tokens + 1);
  }
}
