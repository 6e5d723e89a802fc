/** The intake budget's arithmetic, on an injected clock (docs/security.md "Webhook intake"). */
import { describe, expect, it } from "vitest";
import { IntakeBudget, sourceOf } from "../../src/server/intake-budget.js";

describe("IntakeBudget", () => {
  it("holds only the bytes a body has sent, whatever it declared, and gives them back on release", () => {
    const budget = new IntakeBudget({ maxInFlightBytes: 1_000, maxInFlightBytesPerSource: 1_000 });
    // A thousand bodies that declared 25 MB and sent nothing hold nothing: a real one still fits.
    const idle = Array.from({ length: 1_000 }, (_, i) => budget.admit(`10.0.${i >> 8}.${i & 255}`)!);
    expect(idle.every(Boolean)).toBe(true);
    expect(budget.inFlight).toEqual({ bytes: 0, bodies: 1_000 });
    const real = budget.admit("140.82.112.1")!;
    expect(real.grow(600)).toBe(true);
    expect(idle[0]!.grow(500)).toBe(false);
    expect(idle[0]!.grow(400)).toBe(true);
    expect(budget.admit("10.9.9.9")).toBeUndefined();
    real.release();
    real.release();
    expect(budget.inFlight.bytes).toBe(400);
    for (const admission of idle) admission.release();
    expect(budget.inFlight).toEqual({ bytes: 0, bodies: 0 });
  });

  it("holds one source address to its share of the bytes, leaving the rest to others", () => {
    const budget = new IntakeBudget({ maxInFlightBytes: 1_000, maxInFlightBytesPerSource: 300 });
    const first = budget.admit("203.0.113.7")!;
    const second = budget.admit("203.0.113.7")!;
    expect(first.grow(200)).toBe(true);
    expect(second.grow(200)).toBe(false);
    expect(second.grow(100)).toBe(true);
    expect(budget.admit("203.0.113.7")).toBeUndefined();
    expect(budget.heldBy("203.0.113.7")).toBe(300);
    const other = budget.admit("198.51.100.1")!;
    expect(other.grow(300)).toBe(true);
    first.release();
    expect(budget.admit("203.0.113.7")).toBeDefined();
  });

  it("opens a bounded number of connections per source address, IPv6 by /64", () => {
    const budget = new IntakeBudget({ maxConnectionsPerSource: 2 });
    const a = budget.openConnection(sourceOf("2001:db8:1:2::10"))!;
    expect(budget.openConnection(sourceOf("2001:db8:1:2:ffff::1"))).toBeDefined();
    expect(budget.openConnection(sourceOf("2001:db8:1:2::99"))).toBeUndefined();
    expect(budget.openConnection(sourceOf("2001:db8:1:3::10"))).toBeDefined();
    a();
    a();
    expect(budget.openConnection(sourceOf("2001:db8:1:2::99"))).toBeDefined();
    expect(budget.openConnection(sourceOf("2001:db8:1:2::99"))).toBeUndefined();
  });

  it("names a source by its IPv4 address, mapped or not, and by its IPv6 /64", () => {
    expect(sourceOf("127.4.5.6")).toBe("127.4.5.6");
    expect(sourceOf("::ffff:127.4.5.6")).toBe("127.4.5.6");
    expect(sourceOf("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(sourceOf("::1")).toBe("0:0:0:0::/64");
    expect(sourceOf(undefined)).toBe("unknown");
  });

  it("finds a body too slow once its grace is over and it has sent less than the minimum rate owes", () => {
    let now = 0;
    const budget = new IntakeBudget({ minBytesPerSecond: 1_000, rateGraceMs: 5_000, now: () => now });
    const drip = budget.admit("192.0.2.1")!;
    const steady = budget.admit("192.0.2.2")!;
    const small = budget.admit("192.0.2.3")!;
    now = 5_000;
    expect([drip.tooSlow(undefined), steady.tooSlow(undefined), small.tooSlow(300)]).toEqual([
      false,
      false,
      false,
    ]);
    // One byte every 4 s against 1,000 bytes a second.
    drip.grow(2);
    steady.grow(2_000);
    small.grow(300);
    now = 7_000;
    expect(drip.tooSlow(undefined)).toBe(true);
    expect(steady.tooSlow(undefined)).toBe(false);
    // A declared body owes no more than its length: complete, it is never too slow.
    now = 60_000;
    expect(small.tooSlow(300)).toBe(false);
    expect(steady.tooSlow(undefined)).toBe(true);
  });
});
