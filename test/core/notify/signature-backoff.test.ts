import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_SCHEDULE, retryableStatus, retryDelay } from "../../../src/core/notify/backoff.js";
import { claimInLedger, LEDGER_SIZE, ledgerIds } from "../../../src/core/notify/ledger.js";
import { signatureMatches, signBody } from "../../../src/core/notify/signature.js";

describe("body signature", () => {
  it("is GitHub's form: sha256= and the hex HMAC-SHA256 of the exact body bytes", () => {
    const body = '{"event":"promoted","text":"é"}';
    const expected = createHmac("sha256", "k3y").update(Buffer.from(body, "utf8")).digest("hex");
    expect(signBody("k3y", body)).toBe(`sha256=${expected}`);
    expect(signatureMatches("k3y", body, `sha256=${expected}`)).toBe(true);
    expect(signatureMatches("other", body, `sha256=${expected}`)).toBe(false);
    expect(signatureMatches("k3y", `${body} `, `sha256=${expected}`)).toBe(false);
    expect(signatureMatches("k3y", body, undefined)).toBe(false);
  });
});

describe("retry schedule", () => {
  it("doubles from the first delay up to the cap, and stops after the last attempt", () => {
    const schedule = { maxAttempts: 6, firstDelayMs: 1000, maxDelayMs: 5000, maxTotalMs: 60_000 };
    const delays: number[] = [];
    let elapsed = 0;
    for (let attempt = 1; ; attempt++) {
      const delay = retryDelay(schedule, attempt, elapsed);
      if (delay === undefined) break;
      delays.push(delay);
      elapsed += delay;
    }
    expect(delays).toEqual([1000, 2000, 4000, 5000, 5000]);
  });

  it("stops when the next pause would pass the total time", () => {
    const schedule = { maxAttempts: 100, firstDelayMs: 1000, maxDelayMs: 100_000, maxTotalMs: 10_000 };
    expect(retryDelay(schedule, 3, 5000)).toBe(4000);
    expect(retryDelay(schedule, 4, 7000)).toBeUndefined();
    expect(retryDelay(DEFAULT_RETRY_SCHEDULE, DEFAULT_RETRY_SCHEDULE.maxAttempts, 0)).toBeUndefined();
  });

  it("retries timeouts, rate limits and server errors, never another client error", () => {
    expect([408, 429, 500, 502, 503].map(retryableStatus)).toEqual([true, true, true, true, true]);
    expect([400, 401, 403, 404, 410, 422].map(retryableStatus)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe("notification ledger", () => {
  const id = (n: number) => `${n.toString(16).padStart(8, "0")}-0000-0000-0000-000000000000`;

  it("claims an id once; the second claim sees it", () => {
    const first = claimInLedger(undefined, id(1));
    expect(first).not.toBe("seen");
    const content = (first as { content: string }).content;
    expect(claimInLedger(content, id(1))).toBe("seen");
    expect(claimInLedger(content, id(2))).not.toBe("seen");
  });

  it("keeps the newest ids only, and reads nothing from a file it cannot parse", () => {
    let content: string | undefined;
    for (let n = 0; n < LEDGER_SIZE + 5; n++)
      content = (claimInLedger(content, id(n)) as { content: string }).content;
    const ids = ledgerIds(content);
    expect(ids).toHaveLength(LEDGER_SIZE);
    expect(ids[0]).toBe(id(5));
    expect(ledgerIds("not json")).toEqual([]);
    expect(ledgerIds('{"ids":["../../etc", 3]}')).toEqual([]);
  });
});
