/**
 * Per-registry guards: a circuit that stays open while a registry asked us to wait (429), a
 * request budget per minute and a concurrency limit. Time comes from the injected clock so tests
 * never wait for real.
 */

export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active += 1;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      // hand the slot over directly so a newcomer cannot overtake a waiter
      if (next) next();
      else this.active -= 1;
    }
  }
}

/** Sliding one-minute window of request start times. */
export class RequestBudget {
  private readonly starts: number[] = [];
  constructor(private readonly perMinute: number) {}

  /** 0 when a request may start now (and records it), else how long until one may. */
  take(nowMs: number): number {
    while (this.starts.length > 0 && this.starts[0]! <= nowMs - 60_000) this.starts.shift();
    if (this.starts.length < this.perMinute) {
      this.starts.push(nowMs);
      return 0;
    }
    return this.starts[0]! + 60_000 - nowMs;
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
