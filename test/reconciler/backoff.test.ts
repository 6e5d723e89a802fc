import { describe, expect, it } from "vitest";
import { backoffDelay, jitteredInterval } from "../../src/reconciler/backoff.js";

const policy = { baseMs: 1_000, maxMs: 60_000 };

describe("backoffDelay", () => {
  it("doubles with each consecutive failure", () => {
    expect([1, 2, 3, 4].map((failures) => backoffDelay(failures, policy, 1))).toEqual([
      1_000, 2_000, 4_000, 8_000,
    ]);
  });

  it("never exceeds the cap, however many failures", () => {
    expect(backoffDelay(50, policy, 1)).toBe(60_000);
    expect(backoffDelay(1_000_000, policy, 1)).toBe(60_000);
  });

  it("jitters between half and all of the delay", () => {
    expect(backoffDelay(3, policy, 0)).toBe(2_000);
    expect(backoffDelay(3, policy, 0.5)).toBe(3_000);
  });
});

describe("jitteredInterval", () => {
  it("adds up to a quarter of the interval", () => {
    expect(jitteredInterval(120_000, 0)).toBe(120_000);
    expect(jitteredInterval(120_000, 1)).toBe(150_000);
  });
});
