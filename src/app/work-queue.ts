import { askedRetryDelayMs, mayPassOnRetry } from "../core/errors.js";
import type { AppLogger } from "./app-deps.js";

/** Retries of a task that failed for a reason that may pass (docs/reliability.md row 21). */
export interface RetryPolicy {
  /** Retries after the first run; then the task is dropped and the periodic scan redoes the work. */
  attempts: number;
  /** The first retry's delay; each later one doubles it, up to maxDelayMs. */
  firstDelayMs: number;
  /** No retry waits longer: a failure that asks for more (Retry-After) is left to the periodic scan. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, firstDelayMs: 2_000, maxDelayMs: 60_000 };

export interface WorkQueueOptions {
  retry?: RetryPolicy;
  /** Runs `run` after `ms` and returns a cancel; default an unref'd setTimeout (tests pass their own). */
  schedule?: (ms: number, run: () => void) => () => void;
  /** In [0, 1): spreads retries so replicas that failed together do not retry together. */
  random?: () => number;
  /** The clock a rate-limit reset time is read against (epoch ms); default Date.now. */
  now?: () => number;
}

/**
 * Background work behind a fast webhook ack (docs/reliability.md row 9: GitHub wants a 2xx within
 * 10 s). Per key, at most one task runs and one waits; further tasks for that key while one is
 * waiting are merged into it (it will read the latest state anyway), so a burst of 1,000 hints for
 * one repository becomes two syncs. A task that fails for a reason that may pass (a TransientError,
 * or GitHub's 429/5xx or 403 rate limit after Octokit's own retries) runs again after a growing, jittered delay,
 * unless newer work for its key supersedes it; a task lost in a crash, or out of retries, is
 * caught up by the periodic scan.
 */
export class WorkQueue {
  readonly #waiting = new Set<string>();
  readonly #tails = new Map<string, Promise<void>>();
  readonly #running = new Set<Promise<void>>();
  readonly #retries = new Map<string, () => void>();
  readonly #retry: RetryPolicy;
  readonly #schedule: (ms: number, run: () => void) => () => void;
  readonly #random: () => number;
  readonly #now: () => number;
  #completed = 0;
  #closed = false;

  constructor(
    private readonly log: AppLogger,
    options: WorkQueueOptions = {},
  ) {
    this.#retry = options.retry ?? DEFAULT_RETRY;
    this.#schedule = options.schedule ?? unrefTimeout;
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
  }

  enqueue(key: string, task: () => Promise<unknown>): void {
    this.#enqueue(key, task, 0);
  }

  #enqueue(key: string, task: () => Promise<unknown>, attempt: number): void {
    if (this.#closed || this.#waiting.has(key)) return;
    // New work for the key reads the latest state, so it stands in for a pending retry.
    this.#retries.get(key)?.();
    this.#retries.delete(key);
    this.#waiting.add(key);
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const run = previous.then(async () => {
      this.#waiting.delete(key);
      try {
        await task();
      } catch (error) {
        this.#failed(key, task, attempt, error);
      } finally {
        this.#completed++;
      }
    });
    this.#tails.set(key, run);
    this.#running.add(run);
    void run.finally(() => {
      this.#running.delete(run);
      if (this.#tails.get(key) === run) this.#tails.delete(key);
    });
  }

  #failed(key: string, task: () => Promise<unknown>, attempt: number, error: unknown): void {
    const message = (error as Error).message;
    if (!mayPassOnRetry(error)) {
      this.log.error({ key, error: message }, "background task failed");
      return;
    }
    const delayMs = this.#delayMs(attempt, error);
    const superseded = this.#waiting.has(key);
    if (this.#closed || superseded || attempt >= this.#retry.attempts || delayMs === undefined) {
      const why = superseded ? "newer work for it is queued" : "the periodic scan will redo it";
      this.log.warn({ key, error: message, attempt: attempt + 1 }, `background task failed for now; ${why}`);
      return;
    }
    this.log.warn(
      { key, error: message, attempt: attempt + 1, retryInMs: delayMs },
      "background task failed for now; retrying",
    );
    const cancel = this.#schedule(delayMs, () => {
      this.#retries.delete(key);
      this.#enqueue(key, task, attempt + 1);
    });
    this.#retries.set(key, cancel);
  }

  /** Doubling from firstDelayMs, the upper half jittered; undefined when the failure asks for longer than maxDelayMs. */
  #delayMs(attempt: number, error: unknown): number | undefined {
    const { firstDelayMs, maxDelayMs } = this.#retry;
    const backoff = Math.min(maxDelayMs, firstDelayMs * 2 ** attempt);
    const jittered = Math.round(backoff / 2 + (backoff / 2) * this.#random());
    const asked = askedRetryDelayMs(error, this.#now()) ?? 0;
    return asked > maxDelayMs ? undefined : Math.max(jittered, asked);
  }

  /** Resolves when no task is queued or running (tests, shutdown); retries still waiting for their delay are not waited for. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** Retries waiting for their delay. */
  get pendingRetries(): number {
    return this.#retries.size;
  }

  /** Shutdown: cancels waiting retries and takes no new work; what runs finishes (idle() waits for it). */
  close(): void {
    this.#closed = true;
    for (const cancel of this.#retries.values()) cancel();
    this.#retries.clear();
  }

  /** Tasks run so far (the bench's coalescing figure). */
  get completed(): number {
    return this.#completed;
  }
}

function unrefTimeout(ms: number, run: () => void): () => void {
  const timer = setTimeout(run, ms);
  timer.unref();
  return () => clearTimeout(timer);
}
