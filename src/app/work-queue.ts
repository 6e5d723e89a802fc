import type { AppLogger } from "./app-deps.js";

/**
 * Background work behind a fast webhook ack (docs/reliability.md row 9: GitHub wants a 2xx within
 * 10 s). Per key, at most one task runs and one waits; further tasks for that key while one is
 * waiting are merged into it (it will read the latest state anyway), so a burst of 1,000 hints for
 * one repository becomes two syncs. A task lost in a crash is caught up by the periodic scan.
 */
export class WorkQueue {
  readonly #waiting = new Set<string>();
  readonly #tails = new Map<string, Promise<void>>();
  readonly #running = new Set<Promise<void>>();
  #completed = 0;

  constructor(private readonly log: AppLogger) {}

  enqueue(key: string, task: () => Promise<unknown>): void {
    if (this.#waiting.has(key)) return;
    this.#waiting.add(key);
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const run = previous.then(async () => {
      this.#waiting.delete(key);
      try {
        await task();
      } catch (error) {
        this.log.error({ key, error: (error as Error).message }, "background task failed");
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

  /** Resolves when no task is queued or running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  /** Tasks run so far (the bench's coalescing figure). */
  get completed(): number {
    return this.#completed;
  }
}
