import { describe, expect, it } from "vitest";
import { NotificationOutbox, type PostOutcome } from "../../src/app/notify-outbox.js";
import { silentLogger } from "../../src/app/app-deps.js";
import { TransientError } from "../../src/core/errors.js";
import type { NotifyEvent } from "../../src/core/notify/notify-event.js";
import { DELIVERY_HEADER, SIGNATURE_HEADER, signatureMatches } from "../../src/core/notify/signature.js";
import type { NotifyTarget } from "../../src/core/notify/targets.js";

const event: NotifyEvent = {
  kind: "merged",
  repository: "acme/config",
  environment: "staging",
  occurrence: "pull:3",
  summary: "shop 1.7.0 → 1.8.0 merged into staging",
  changes: [],
  at: "2026-12-02T10:00:00.000Z",
};
const target: NotifyTarget = {
  name: "releases",
  url: "https://hooks.example.com/x",
  kind: "json",
  secret: "k3y",
  host: "hooks.example.com",
};

/** An outbox on a fake clock: each pause moves the clock, none waits. */
function outbox(
  answers: PostOutcome[],
  schedule = { maxAttempts: 5, firstDelayMs: 1000, maxDelayMs: 4000, maxTotalMs: 60_000 },
) {
  let clock = 0;
  const pauses: number[] = [];
  const posts: { body: string; headers: Record<string, string>; at: number }[] = [];
  const outcomes: string[] = [];
  const claimed = new Set<string>();
  const box = new NotificationOutbox({
    poster: {
      post: async (_url, body, headers) => {
        posts.push({ body, headers, at: clock });
        return answers.shift() ?? { kind: "answered", status: 200 };
      },
    },
    log: () => silentLogger,
    now: () => clock,
    sleep: async (ms) => {
      pauses.push(ms);
      clock += ms;
    },
    schedule,
    maxQueued: 2,
    concurrency: 1,
    observe: (outcome) => outcomes.push(outcome),
  });
  // One ledger shared by every "replica" of the test.
  const claim = async (id: string) =>
    (claimed.has(id) ? "seen" : (claimed.add(id), "claimed")) as "seen" | "claimed";
  return { box, pauses, posts, outcomes, claim };
}

describe("notification outbox", () => {
  it("retries a 500 with backoff on the clock, with the same delivery id and a valid signature each time", async () => {
    const o = outbox([
      { kind: "answered", status: 500 },
      { kind: "unreachable", reason: "connection failed" },
    ]);
    o.box.enqueue({ event, targets: [target], claim: o.claim });
    await o.box.idle();
    expect(o.pauses).toEqual([1000, 2000]);
    expect(o.posts.map((post) => post.at)).toEqual([0, 1000, 3000]);
    expect(new Set(o.posts.map((post) => post.headers[DELIVERY_HEADER])).size).toBe(1);
    for (const post of o.posts)
      expect(signatureMatches("k3y", post.body, post.headers[SIGNATURE_HEADER])).toBe(true);
    expect(o.outcomes).toEqual(["sent"]);
  });

  it("gives up after the last attempt, and at once on a 4xx or a refused address", async () => {
    const failing = outbox(Array.from({ length: 10 }, () => ({ kind: "answered", status: 503 }) as const));
    failing.box.enqueue({ event, targets: [target], claim: failing.claim });
    await failing.box.idle();
    expect(failing.posts).toHaveLength(5);
    expect(failing.pauses).toEqual([1000, 2000, 4000, 4000]);
    expect(failing.outcomes).toEqual(["failed"]);
    for (const answer of [
      { kind: "answered", status: 404 },
      { kind: "refused", reason: "link-local" },
    ] as PostOutcome[]) {
      const o = outbox([answer]);
      o.box.enqueue({ event, targets: [target], claim: o.claim });
      await o.box.idle();
      expect(o.posts).toHaveLength(1);
      expect(o.outcomes).toEqual(["failed"]);
    }
  });

  it("sends an event once: a second enqueue here, or one another replica claimed, is a duplicate", async () => {
    const o = outbox([]);
    o.box.enqueue({ event, targets: [target], claim: o.claim });
    o.box.enqueue({ event: { ...event, at: "later" }, targets: [target], claim: o.claim });
    await o.box.idle();
    const replica = new NotificationOutbox({
      poster: {
        post: async (_u, body, headers) => (
          o.posts.push({ body, headers, at: -1 }),
          { kind: "answered", status: 200 }
        ),
      },
      log: () => silentLogger,
      now: () => 0,
      sleep: async () => {},
      observe: (outcome) => o.outcomes.push(outcome),
    });
    replica.enqueue({ event, targets: [target], claim: o.claim });
    await replica.idle();
    expect(o.posts).toHaveLength(1);
    expect(o.outcomes).toEqual(["duplicate", "sent", "duplicate"]);
  });

  it("claims again on the schedule while the ledger fails for a reason that may pass, then sends once", async () => {
    const o = outbox([]);
    const failures: Error[] = [
      new TransientError("notify-ledger-contended", "the notification ledger moved 6 times"),
      Object.assign(new Error("Server Error"), { status: 502 }),
    ];
    let claims = 0;
    const flakyClaim = async (id: string) => {
      claims++;
      const failure = failures.shift();
      if (failure) throw failure;
      return o.claim(id);
    };
    o.box.enqueue({ event, targets: [target], claim: flakyClaim });
    await o.box.idle();
    expect(claims).toBe(3);
    expect(o.pauses).toEqual([1000, 2000]);
    expect(o.posts).toHaveLength(1);
    expect(o.outcomes).toEqual(["sent"]);
  });

  it("gives a claim up at once on a final refusal, and after the schedule's last attempt otherwise", async () => {
    const refused = outbox([]);
    const forbidden = async () => {
      throw Object.assign(new Error("Resource not accessible by integration"), { status: 403 });
    };
    refused.box.enqueue({ event, targets: [target], claim: forbidden });
    await refused.box.idle();
    expect(refused.pauses).toEqual([]);
    expect(refused.posts).toHaveLength(0);
    expect(refused.outcomes).toEqual(["failed"]);

    const contended = outbox([]);
    let claims = 0;
    const alwaysContended = async (): Promise<"claimed"> => {
      claims++;
      throw new TransientError("notify-ledger-contended", "the notification ledger moved 6 times");
    };
    contended.box.enqueue({ event, targets: [target], claim: alwaysContended });
    await contended.box.idle();
    expect(claims).toBe(5);
    expect(contended.pauses).toEqual([1000, 2000, 4000, 4000]);
    expect(contended.posts).toHaveLength(0);
    expect(contended.outcomes).toEqual(["failed"]);
  });

  it("drops what does not fit in the queue, and counts it", async () => {
    const o = outbox([]);
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const slowClaim = async (id: string) => (await blocked, o.claim(id));
    const accepted = [1, 2, 3, 4].map((n) =>
      o.box.enqueue({ event: { ...event, occurrence: `pull:${n}` }, targets: [target], claim: slowClaim }),
    );
    release();
    await o.box.idle();
    // One running, two waiting: the fourth is dropped.
    expect(accepted).toEqual([true, true, true, false]);
    expect(o.outcomes.filter((outcome) => outcome === "dropped")).toHaveLength(1);
    expect(o.posts).toHaveLength(3);
  });
});
