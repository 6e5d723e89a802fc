/**
 * Keeps one person's comment commands from spending the installation's API budget (GitHub allows
 * an installation 5,000 requests an hour: https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api)
 * and from flooding a thread (docs/security.md "Comment commands"). Per person and repository:
 *  - every command counts against an hourly budget, read-only ones (`/ferry status`, `/ferry
 *    history`) and those that succeed included: at most `perHour` in any rolling hour;
 *  - refused comments are bounded much sooner: a token bucket admits a burst of comments and then
 *    one every `refillMs`, and a comment that was not refused gives its token back.
 * When either is spent the person is muted: the first comment past the limit gets one reply saying
 * for how long, the rest get nothing at all. The map is bounded: the least recently seen person
 * goes first.
 */
export interface CommandFloodGuardOptions {
  /** Commands one person may run in one repository in any rolling hour (default 30). */
  perHour?: number;
  /** Comments admitted at once before refusals start to count (default 5). */
  burst?: number;
  /** One more comment admitted every this many ms (default 60 s). */
  refillMs?: number;
  /** How long a person whose comments were refused a burst of times is ignored (default 10 minutes). */
  muteMs?: number;
  /** People tracked at once (default 10,000). */
  maxEntries?: number;
  now?: () => number;
}

/**
 * `run`: handle the comment's first `commands` commands (the rest are answered with one line);
 * `warn`: reply once that further commands are ignored for `minutes`; `ignore`: do nothing.
 */
export type FloodDecision =
  { kind: "run"; commands: number } | { kind: "warn"; minutes: number } | { kind: "ignore" };

export const COMMANDS_PER_HOUR = 30;
const HOUR_MS = 60 * 60_000;

interface Entry {
  /** Comment tokens left, as of `at`. */
  tokens: number;
  at: number;
  mutedUntil: number;
  /** When each command of the last hour was admitted, oldest first. */
  admitted: number[];
}

export class CommandFloodGuard {
  readonly perHour: number;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly muteMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();

  constructor(options: CommandFloodGuardOptions = {}) {
    this.perHour = options.perHour ?? COMMANDS_PER_HOUR;
    this.burst = options.burst ?? 5;
    this.refillMs = options.refillMs ?? 60_000;
    this.muteMs = options.muteMs ?? 10 * 60_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? (() => Date.now());
  }

  /** Admits one comment by `login` in `repository` that would run `commands` commands. */
  admit(repository: string, login: string, commands: number): FloodDecision {
    if (commands <= 0) return { kind: "ignore" };
    const key = `${repository}:${login.toLowerCase()}`;
    const now = this.now();
    const entry = this.entries.get(key) ?? { tokens: this.burst, at: now, mutedUntil: 0, admitted: [] };
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    if (now < entry.mutedUntil) return { kind: "ignore" };
    entry.tokens = Math.min(this.burst, entry.tokens + Math.floor((now - entry.at) / this.refillMs));
    entry.at = now - ((now - entry.at) % this.refillMs);
    while (entry.admitted.length > 0 && entry.admitted[0]! <= now - HOUR_MS) entry.admitted.shift();
    const granted = Math.min(commands, this.perHour - entry.admitted.length);
    if (entry.tokens <= 0 || granted <= 0) {
      // Out of comments for `muteMs`, or out of commands until the oldest of the hour expires.
      entry.mutedUntil = entry.tokens <= 0 ? now + this.muteMs : entry.admitted[0]! + HOUR_MS;
      return { kind: "warn", minutes: Math.max(1, Math.ceil((entry.mutedUntil - now) / 60_000)) };
    }
    entry.tokens--;
    for (let i = 0; i < granted; i++) entry.admitted.push(now);
    return { kind: "run", commands: granted };
  }

  /** Gives the comment's token back: it was not refused. Its commands still count for the hour. */
  refund(repository: string, login: string): void {
    const entry = this.entries.get(`${repository}:${login.toLowerCase()}`);
    if (entry && entry.mutedUntil <= this.now()) entry.tokens = Math.min(this.burst, entry.tokens + 1);
  }
}
