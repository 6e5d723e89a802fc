import { describe, expect, it } from "vitest";
import { fitBody, GITHUB_BODY_LIMIT } from "../../../src/core/pr/body-limit.js";

describe("fitting a body to GitHub's 65,536-character limit", () => {
  it("leaves a body that fits as it is, the hidden block after a blank line", () => {
    expect(fitBody("table", "<!-- block -->", "see x")).toBe("table\n\n<!-- block -->");
  });

  it("cuts the visible text at a whole line, names where the rest is and keeps the hidden block whole", () => {
    const rows = Array.from({ length: 5000 }, (_, i) => `| row ${i} | ${"x".repeat(20)} |`).join("\n");
    const hidden = `<!-- ferry:plan ${"p".repeat(1000)} -->`;
    const body = fitBody(rows, hidden, "Every change: https://example.test/c")!;
    expect(body.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
    expect(body.endsWith(hidden)).toBe(true);
    expect(body).toContain("Every change: https://example.test/c");
    const lastRow = body
      .split("\n")
      .filter((line) => line.startsWith("| row "))
      .at(-1)!;
    expect(lastRow).toMatch(/^\| row \d+ \| x{20} \|$/);
  });

  it("answers undefined when the hidden block alone leaves no room", () => {
    expect(fitBody("table", "h".repeat(GITHUB_BODY_LIMIT), "see x")).toBeUndefined();
  });
});
