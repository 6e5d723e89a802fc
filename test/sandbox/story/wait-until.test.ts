import { describe, expect, it } from "vitest";
import { done, notYet, StoryTimeout, waitUntil } from "../../../packages/sandbox/src/story/wait-until.js";

describe("waitUntil", () => {
  it("returns the probe's value once the effect is there", async () => {
    let calls = 0;
    const value = await waitUntil(
      "the third call",
      async () => (++calls === 3 ? done(calls) : notYet(`call ${calls}`)),
      { intervalMs: 1 },
    );
    expect(value).toBe(3);
  });

  it("keeps waiting through a probe that throws", async () => {
    let calls = 0;
    const value = await waitUntil(
      "a flaky API",
      async () => {
        if (++calls === 1) throw new Error("ECONNRESET");
        return done("answer");
      },
      { intervalMs: 1 },
    );
    expect(value).toBe("answer");
  });

  it("gives up at the deadline naming what it waited for and what it saw last", async () => {
    const wait = waitUntil("prod to run 1.8.0", async () => notYet("1.7.3, 3/3 available"), {
      timeoutMs: 20,
      intervalMs: 5,
    });
    await expect(wait).rejects.toBeInstanceOf(StoryTimeout);
    await expect(wait).rejects.toThrow(
      /waiting for prod to run 1\.8\.0 \(last seen: 1\.7\.3, 3\/3 available\)/,
    );
  });
});

describe("waitUntil when the story is interrupted", () => {
  it("stops at once, saying what it was waiting for", async () => {
    const interrupt = new AbortController();
    interrupt.abort();
    await expect(
      waitUntil("the staging PR", async () => notYet(), { signal: interrupt.signal }),
    ).rejects.toThrow("interrupted while waiting for the staging PR");
  });
});
