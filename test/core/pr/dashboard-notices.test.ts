import { describe, expect, it } from "vitest";
import { formatNotices, parseNotices } from "../../../src/core/pr/dashboard.js";

describe("the dashboard's policy notices", () => {
  it("round-trip through the issue body", () => {
    const notices = [
      { environment: "staging", image: "shop", message: "running 2.0.0 is outside the policy (semver 1.x)" },
    ];
    expect(parseNotices(`intro\n\n${formatNotices(notices)}\n`)).toEqual(notices);
  });

  it("render a message from a config's allow pattern as text, never as markdown or HTML", () => {
    const text = formatNotices([
      { environment: "staging", image: "shop", message: "outside semver * matching /^<img src=x>|[a](b)$/" },
    ]);
    expect(text).not.toContain("<img");
    expect(text.split("\n")[2]).toContain("&lt;img src=x&gt;\\|\\[a\\]\\(b\\)");
  });

  it("drop malformed or oversized entries someone edited into the body, and render nothing when empty", () => {
    const body = `<!-- ferry:notices [{"environment":"staging","image":"shop","message":"${"x".repeat(600)}"},{"environment":"../x","image":"shop","message":"m"},{"environment":"prod","image":"shop","message":"ok"},"junk"] -->`;
    expect(parseNotices(body)).toEqual([{ environment: "prod", image: "shop", message: "ok" }]);
    expect(parseNotices("no block")).toEqual([]);
    expect(formatNotices([])).toBe("");
  });
});
