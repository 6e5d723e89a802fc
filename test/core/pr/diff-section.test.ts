import { describe, expect, it } from "vitest";
import { withDiffSection, withoutDiffSection } from "../../../src/core/pr/diff-section.js";

const table = "| Environment | Added |\n| --- | --- |\n| staging | 0 |";

describe("the diff section of a PR body", () => {
  it("is appended once and replaced, never repeated", () => {
    const once = withDiffSection("Promote shop", table);
    expect(once).toContain("| staging | 0 |");
    const twice = withDiffSection(once, table.replace("0 |", "1 |"));
    expect(twice.match(/<!-- ferry:diff -->/g)).toHaveLength(1);
    expect(twice).toContain("| staging | 1 |");
    expect(withoutDiffSection(twice)).toBe("Promote shop");
  });

  it("is left out when the body would pass GitHub's limit", () => {
    const body = "x".repeat(100);
    expect(withDiffSection(body, table, 120)).toBe(body);
    expect(withDiffSection(body, table, 1000).length).toBeLessThanOrEqual(1000);
  });
});
