import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { renderBody, slackBody } from "../../../src/core/notify/bodies.js";
import { deliveryId, eventId, type NotifyEvent } from "../../../src/core/notify/notify-event.js";
import { NOTIFY_KINDS } from "../../../src/core/notify/targets.js";

/**
 * Golden bodies (docs/testing.md "Golden files"): test/fixtures/notify/<kind>.json is the body of
 * one promotion as each receiver gets it; UPDATE_GOLDEN=1 writes them anew.
 */
const FIXTURES = fileURLToPath(new URL("../../fixtures/notify/", import.meta.url));

const promoted: NotifyEvent = {
  kind: "promoted",
  repository: "acme/config",
  environment: "prod",
  occurrence: "pull:7",
  summary: "shop 1.7.0 → 1.8.0 promoted to prod",
  changes: [
    {
      image: "shop",
      repository: "ghcr.io/acme/shop",
      from: "1.7.0",
      to: "1.8.0",
      digest: "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
      compareUrl: "https://github.com/acme/shop/compare/1111111...2222222",
    },
  ],
  pull: { number: 7, url: "https://github.com/acme/config/pull/7" },
  requestedBy: "mona",
  approvedBy: ["hubot"],
  at: "2026-12-02T10:00:00.000Z",
};

describe("notification bodies", () => {
  it.each(NOTIFY_KINDS)("%s body of a promotion is the golden one", (kind) => {
    const body = `${JSON.stringify(JSON.parse(renderBody(kind, promoted, deliveryId(promoted, "releases"))), null, 2)}\n`;
    const file = `${FIXTURES}${kind}.json`;
    if (process.env.UPDATE_GOLDEN === "1") writeFileSync(file, body);
    expect(body).toBe(readFileSync(file, "utf8"));
  });

  it("names the release in every body: image, from → to, digest, compare link, who approved", () => {
    for (const kind of NOTIFY_KINDS) {
      const body = renderBody(kind, promoted, "d");
      for (const part of [
        "shop",
        "1.7.0",
        "1.8.0",
        "sha256:2c26b46b68ff",
        "/compare/1111111...2222222",
        "hubot",
      ])
        expect(body, `${kind} names ${part}`).toContain(part);
    }
  });

  it("escapes Slack's control characters, so that no text from a repository can ping or link", () => {
    const body = slackBody({ ...promoted, summary: "<!channel> & <https://evil.example|click>" });
    const text = JSON.stringify(body);
    expect(text).not.toContain("<!channel>");
    expect(text).toContain("&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;");
  });

  it("lists at most 20 images and counts the rest; cuts Slack's header to 150 characters", () => {
    const many = {
      ...promoted,
      environment: "e".repeat(200),
      changes: Array.from({ length: 45 }, (_, i) => ({ ...promoted.changes[0]!, image: `app${i}` })),
    };
    const json = JSON.parse(renderBody("json", many, "d")) as { changes: unknown[]; moreChanges: number };
    expect(json.changes).toHaveLength(20);
    expect(json.moreChanges).toBe(25);
    const slack = slackBody(many) as { blocks: { text?: { text: string } }[] };
    expect([...slack.blocks[0]!.text!.text].length).toBeLessThanOrEqual(150);
    expect(slack.blocks[1]!.text!.text).toContain("and 25 more");
  });
});

describe("delivery ids", () => {
  it("are the same for the same occurrence whenever it is seen, and differ per target and occurrence", () => {
    const later = { ...promoted, at: "2026-12-03T00:00:00.000Z", summary: "other words" };
    expect(eventId(later)).toBe(eventId(promoted));
    expect(deliveryId(later, "releases")).toBe(deliveryId(promoted, "releases"));
    expect(deliveryId(promoted, "releases")).not.toBe(deliveryId(promoted, "chat"));
    expect(eventId({ ...promoted, occurrence: "pull:8" })).not.toBe(eventId(promoted));
    expect(eventId({ ...promoted, kind: "merged" })).not.toBe(eventId(promoted));
    expect(deliveryId(promoted, "releases")).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
  });
});
