import { describe, expect, it } from "vitest";
import { KeyedMutex } from "../../src/app/keyed-mutex.js";
import { TransientError, UserError } from "../../src/core/errors.js";
import { WorkQueue } from "../../src/app/work-queue.js";

const quiet = { info: () => {}, warn: () => {}, error: () => {} };

describe("KeyedMutex", () => {
  it("runs tasks for the same key one after the other, and other keys alongside", async () => {
    const locks = new KeyedMutex();
    const log: string[] = [];
    const task = (name: string) => async () => {
      log.push(`${name} start`);
      await new Promise((resolve) => setImmediate(resolve));
      log.push(`${name} end`);
    };
    await Promise.all([
      locks.run("staging", task("a")),
      locks.run("staging", task("b")),
      locks.run("prod", task("c")),
    ]);
    expect(log.indexOf("a end")).toBeLessThan(log.indexOf("b start"));
    expect(log.indexOf("c start")).toBeLessThan(log.indexOf("a end"));
  });

  it("keeps going after a failed task", async () => {
    const locks = new KeyedMutex();
    await expect(locks.run("k", async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await locks.run("k", async () => 42)).toBe(42);
  });
});

describe("WorkQueue", () => {
  it("merges a burst for one key into one running and one waiting task", async () => {
    const queue = new WorkQueue(quiet);
    let runs = 0;
    for (let i = 0; i < 1000; i++) queue.enqueue("sync:acme/config", async () => void runs++);
    await queue.idle();
    expect(runs).toBeLessThanOrEqual(2);
    expect(runs).toBeGreaterThanOrEqual(1);
  });

  it("runs a task queued while another for the same key is running, after it", async () => {
    const queue = new WorkQueue(quiet);
    const order: string[] = [];
    let release!: () => void;
    queue.enqueue(
      "k",
      () => new Promise<void>((resolve) => (release = () => (order.push("first"), resolve()))),
    );
    await new Promise((resolve) => setImmediate(resolve));
    queue.enqueue("k", async () => void order.push("second"));
    release();
    await queue.idle();
    expect(order).toEqual(["first", "second"]);
  });

  it("logs a failed task instead of losing the queue", async () => {
    const errors: string[] = [];
    const queue = new WorkQueue({ ...quiet, error: (_fields, message) => errors.push(message) });
    queue.enqueue("a", async () => Promise.reject(new Error("boom")));
    queue.enqueue("b", async () => undefined);
    await queue.idle();
    expect(errors).toEqual(["background task failed"]);
    expect(queue.completed).toBe(2);
  });

  describe("retries of failures that may pass", () => {
    /** A scheduler the test fires by hand: retries wait for the test, never for a clock. */
    function manualTimers() {
      const pending: { ms: number; run: () => void; cancelled: boolean }[] = [];
      return {
        pending,
        schedule: (ms: number, run: () => void) => {
          const entry = { ms, run, cancelled: false };
          pending.push(entry);
          return () => void (entry.cancelled = true);
        },
        fireAll() {
          for (const entry of pending.splice(0)) if (!entry.cancelled) entry.run();
        },
      };
    }
    const retry = { attempts: 3, firstDelayMs: 1_000, maxDelayMs: 8_000 };
    /** A queue on hand-fired timers whose log lines the test reads; `random` places the jitter. */
    function retryingQueue(random?: () => number) {
      const timers = manualTimers();
      const lines: string[] = [];
      const log = {
        info: () => {},
        warn: (fields: Record<string, unknown>, message: string) =>
          lines.push(`warn ${message} ${fields.retryInMs ?? ""}`.trim()),
        error: (_fields: Record<string, unknown>, message: string) => lines.push(`error ${message}`),
      };
      const queue = new WorkQueue(log, { retry, schedule: timers.schedule, ...(random ? { random } : {}) });
      return { timers, lines, queue };
    }

    it("runs a task that failed transiently again after a doubling delay until it succeeds", async () => {
      const { timers, lines, queue } = retryingQueue(() => 1);
      let runs = 0;
      queue.enqueue("sync:acme/config", async () => {
        runs++;
        if (runs < 3) throw new TransientError("registry-unavailable", "registry answered 503");
      });
      await queue.idle();
      expect(runs).toBe(1);
      expect(timers.pending.map((t) => t.ms)).toEqual([1_000]);
      timers.fireAll();
      await queue.idle();
      expect(timers.pending.map((t) => t.ms)).toEqual([2_000]);
      timers.fireAll();
      await queue.idle();
      expect(runs).toBe(3);
      expect(queue.pendingRetries).toBe(0);
      expect(lines).toEqual([
        "warn background task failed for now; retrying 1000",
        "warn background task failed for now; retrying 2000",
      ]);
    });

    it("treats GitHub's 5xx and 429 (an Octokit error's status) as passing, a UserError or a bug as final", async () => {
      const { timers, lines, queue } = retryingQueue(() => 0);
      queue.enqueue("a", async () =>
        Promise.reject(Object.assign(new Error("Bad Gateway"), { status: 502 })),
      );
      queue.enqueue("b", async () => Promise.reject(Object.assign(new Error("limited"), { status: 429 })));
      queue.enqueue("c", async () => Promise.reject(Object.assign(new Error("Not Found"), { status: 404 })));
      queue.enqueue("d", async () => Promise.reject(new UserError("invalid-config", "bad config")));
      queue.enqueue("e", async () => Promise.reject(new Error("bug")));
      await queue.idle();
      // random 0 takes the lower end of the jitter: half the backoff.
      expect(timers.pending.map((t) => t.ms)).toEqual([500, 500]);
      expect(lines.filter((line) => line.startsWith("error"))).toHaveLength(3);
    });

    it("retries GitHub's 403 rate limits as 429s, after the wait they ask for, and leaves other 403s final", async () => {
      const { timers, lines, queue } = retryingQueue(() => 0);
      const refusal = (headers: Record<string, string>, message: string) =>
        Object.assign(new Error(message), { status: 403, response: { headers, data: { message } } });
      queue.enqueue("secondary", async () =>
        Promise.reject(refusal({ "retry-after": "3" }, "You have exceeded a secondary rate limit.")),
      );
      queue.enqueue("primary", async () =>
        Promise.reject(
          refusal({ "x-ratelimit-remaining": "0" }, "API rate limit exceeded for installation."),
        ),
      );
      queue.enqueue("worded", async () =>
        Promise.reject(refusal({}, "You have exceeded a secondary rate limit.")),
      );
      queue.enqueue("denied", async () =>
        Promise.reject(refusal({}, "Resource not accessible by integration")),
      );
      await queue.idle();
      expect(timers.pending.map((t) => t.ms)).toEqual([3_000, 500, 500]);
      expect(lines.filter((line) => line.startsWith("error"))).toEqual(["error background task failed"]);
    });

    it("waits for x-ratelimit-reset when a rate limit names no retry-after", async () => {
      const timers = manualTimers();
      const queue = new WorkQueue(
        { info: () => {}, warn: () => {}, error: () => {} },
        { retry, schedule: timers.schedule, random: () => 0, now: () => 1_000_000 },
      );
      queue.enqueue("reset", async () =>
        Promise.reject(
          Object.assign(new Error("limited"), {
            status: 403,
            response: { headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1004" }, data: {} },
          }),
        ),
      );
      // A 502 names the window's reset too, with requests left: no reason to wait for it.
      queue.enqueue("bad-gateway", async () =>
        Promise.reject(
          Object.assign(new Error("Bad Gateway"), {
            status: 502,
            response: { headers: { "x-ratelimit-remaining": "4999", "x-ratelimit-reset": "4600" }, data: {} },
          }),
        ),
      );
      await queue.idle();
      expect(timers.pending.map((t) => t.ms)).toEqual([4_000, 500]);
    });

    it("gives up after the last attempt and leaves the work to the periodic scan", async () => {
      const { timers, lines, queue } = retryingQueue(() => 1);
      let runs = 0;
      queue.enqueue("k", async () => {
        runs++;
        throw new TransientError("branch-contended", "ferry/staging kept moving");
      });
      for (let i = 0; i < 10; i++) {
        await queue.idle();
        timers.fireAll();
      }
      await queue.idle();
      expect(runs).toBe(1 + retry.attempts);
      expect(lines.at(-1)).toBe("warn background task failed for now; the periodic scan will redo it");
      expect(timers.pending).toEqual([]);
    });

    it("waits as long as Retry-After asks within the cap, and leaves a longer wait to the scan", async () => {
      const { timers, queue } = retryingQueue(() => 1);
      queue.enqueue("soon", async () =>
        Promise.reject(new TransientError("limited", "429", { retryAfterMs: 5_000 })),
      );
      queue.enqueue("late", async () =>
        Promise.reject(new TransientError("limited", "429", { retryAfterMs: 3_600_000 })),
      );
      await queue.idle();
      expect(timers.pending.map((t) => t.ms)).toEqual([5_000]);
    });

    it("lets newer work for the key stand in for a pending retry", async () => {
      const { timers, queue } = retryingQueue();
      const ran: string[] = [];
      queue.enqueue("k", async () => {
        ran.push("first");
        throw new TransientError("registry-unavailable", "503");
      });
      await queue.idle();
      expect(queue.pendingRetries).toBe(1);
      queue.enqueue("k", async () => void ran.push("newer"));
      expect(queue.pendingRetries).toBe(0);
      timers.fireAll();
      await queue.idle();
      expect(ran).toEqual(["first", "newer"]);
    });

    it("drops waiting retries on close and takes no new work", async () => {
      const { timers, queue } = retryingQueue();
      let runs = 0;
      queue.enqueue("k", async () => {
        runs++;
        throw new TransientError("registry-unavailable", "503");
      });
      await queue.idle();
      queue.close();
      timers.fireAll();
      queue.enqueue("other", async () => void runs++);
      await queue.idle();
      expect(runs).toBe(1);
      expect(queue.pendingRetries).toBe(0);
    });
  });
});
