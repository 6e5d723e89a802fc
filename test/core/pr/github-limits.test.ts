import { describe, expect, it } from "vitest";
import {
  fitBody,
  fitCheckOutput,
  fitTitle,
  GITHUB_BODY_LIMIT,
  GITHUB_CHECK_OUTPUT_LIMIT,
  inBatches,
} from "../../../src/core/pr/github-limits.js";

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

describe("fitting a check run's summary to GitHub's 65,535 bytes", () => {
  it("leaves a summary that fits as it is", () => {
    expect(fitCheckOutput("- a\n- b")).toBe("- a\n- b");
  });

  it("cuts at a whole line, counting bytes of UTF-8, and says how many lines are not shown", () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `- problème ${i} ${"é".repeat(20)}`);
    const fitted = fitCheckOutput(lines.join("\n"));
    expect(new TextEncoder().encode(fitted).length).toBeLessThanOrEqual(GITHUB_CHECK_OUTPUT_LIMIT);
    const kept = fitted.split("\n").filter((line) => line.startsWith("- "));
    expect(kept).toEqual(lines.slice(0, kept.length));
    expect(fitted.endsWith(`… ${3000 - kept.length} more lines not shown`)).toBe(true);
  });

  it("cuts one line longer than the limit at a character", () => {
    const fitted = fitCheckOutput("é".repeat(40_000));
    expect(new TextEncoder().encode(fitted).length).toBeLessThanOrEqual(GITHUB_CHECK_OUTPUT_LIMIT);
    expect(fitted.startsWith("éé")).toBe(true);
  });
});

describe("titles and annotations", () => {
  it("cuts a title over 256 characters with an ellipsis", () => {
    expect(fitTitle("t".repeat(300))).toBe(`${"t".repeat(255)}…`);
    expect(fitTitle("short")).toBe("short");
  });

  it("sends annotations 50 a request", () => {
    const batches = inBatches(Array.from({ length: 120 }, (_, i) => i));
    expect(batches.map((batch) => batch.length)).toEqual([50, 50, 20]);
    expect(batches.flat()).toEqual(Array.from({ length: 120 }, (_, i) => i));
    expect(inBatches([])).toEqual([]);
  });
});
