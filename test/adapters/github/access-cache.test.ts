import { describe, expect, it } from "vitest";
import { AccessCache } from "../../../src/adapters/github/access-cache.js";

describe("AccessCache", () => {
  it("shares one lookup between concurrent callers and reuses a kept answer until it expires", async () => {
    let now = 0;
    let lookups = 0;
    const cache = new AccessCache({ ttlMs: 60_000, now: () => now });
    const load = async () => {
      lookups++;
      return "read";
    };
    const keep = (answer: string) => answer === "read";
    await Promise.all([cache.get("k", load, keep), cache.get("k", load, keep)]);
    expect(lookups).toBe(1);
    now = 59_999;
    await cache.get("k", load, keep);
    expect(lookups).toBe(1);
    now = 60_000;
    await cache.get("k", load, keep);
    expect(lookups).toBe(2);
  });

  it("never keeps an answer it is told not to keep, nor a failure", async () => {
    let lookups = 0;
    const cache = new AccessCache({ now: () => 0 });
    const admin = async () => {
      lookups++;
      return "admin";
    };
    await cache.get("k", admin, (answer) => answer !== "admin");
    await cache.get("k", admin, (answer) => answer !== "admin");
    expect(lookups).toBe(2);
    await expect(
      cache.get(
        "f",
        () => Promise.reject(new Error("boom")),
        () => true,
      ),
    ).rejects.toThrow("boom");
    expect(cache.size).toBe(0);
  });

  it("holds at most maxEntries answers", async () => {
    const cache = new AccessCache({ maxEntries: 2, now: () => 0 });
    for (const key of ["a", "b", "c"])
      await cache.get(
        key,
        async () => "none",
        () => true,
      );
    expect(cache.size).toBe(2);
  });
});
