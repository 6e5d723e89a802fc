/**
 * Per-registry guards: a circuit that stays open while a registry asked us to wait (429), a
 * request budget per minute and a concurrency limit. Time comes from the injected clock so tests
 * never wait for real.
 */

/** A limit that may change while running: a fleet's figure divided by its live members. */
export type Limit = number | (() => number);

function valueOf(limit: Limit): number {
  return Math.max(1, Math.floor(typeof limit === "number" ? limit : limit()));
}

export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: Limit) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= valueOf(this.limit)) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active += 1;
    try {
      return await task();
    } finally {
      // hand the slot over directly so a newcomer cannot overtake a waiter (unless the limit shrank)
      const next = this.active <= valueOf(this.limit) ? this.waiting.shift() : undefined;
      if (next) next();
      else this.active -= 1;
    }
  }
}

/** Sliding window (one minute unless told) of request start times. */
export class RequestBudget {
  private readonly starts: number[] = [];
  constructor(
    private readonly perWindow: Limit,
    private readonly windowMs = 60_000,
  ) {}

  /** 0 when a request may start now (and records it), else how long until one may. */
  take(nowMs: number): number {
    this.expire(nowMs);
    const limit = valueOf(this.perWindow);
    if (this.starts.length < limit) {
      this.starts.push(nowMs);
      return 0;
    }
    return this.starts[this.starts.length - limit]! + this.windowMs - nowMs;
  }

  /** Moves one request's recorded time from `fromMs` to `toMs` (e.g. to when its answer came back). */
  retime(fromMs: number, toMs: number): void {
    const index = this.starts.indexOf(fromMs);
    if (index < 0) return;
    this.starts.splice(index, 1);
    let at = this.starts.length;
    while (at > 0 && this.starts[at - 1]! > toMs) at--;
    this.starts.splice(at, 0, toMs);
  }

  /** Requests started in the window, and the limit now. */
  use(nowMs: number): { used: number; limit: number } {
    this.expire(nowMs);
    return { used: this.starts.length, limit: valueOf(this.perWindow) };
  }

  private expire(nowMs: number): void {
    while (this.starts.length > 0 && this.starts[0]! <= nowMs - this.windowMs) this.starts.shift();
  }
}

/** Open until `until` (epoch ms) after a registry said to back off. */
export class Circuit {
  private until = 0;
  private reason = "";

  open(untilMs: number, reason: string): void {
    if (untilMs > this.until) {
      this.until = untilMs;
      this.reason = reason;
    }
  }

  /** Remaining wait in ms, or 0 when closed. */
  remaining(nowMs: number): number {
    return Math.max(0, this.until - nowMs);
  }

  get lastReason(): string {
    return this.reason;
  }
}
