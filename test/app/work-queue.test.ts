import { describe, expect, it } from "vitest";
import { KeyedMutex } from "../../src/app/keyed-mutex.js";
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
});
