import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { diffLines, unifiedDiff, type Edit } from "../../../src/core/diff/line-diff.js";

const sides = (edits: Edit[]) => ({
  a: edits.filter((edit) => edit.op !== "+").map((edit) => edit.line),
  b: edits.filter((edit) => edit.op !== "-").map((edit) => edit.line),
});

/** The length of a longest common subsequence, by the textbook table (small inputs only). */
function lcs(a: string[], b: string[]): number {
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = 1; i <= a.length; i += 1)
    for (let j = 1; j <= b.length; j += 1)
      table[i]![j] =
        a[i - 1] === b[j - 1] ? table[i - 1]![j - 1]! + 1 : Math.max(table[i - 1]![j]!, table[i]![j - 1]!);
  return table[a.length]![b.length]!;
}

const lines = fc.array(fc.constantFrom("a", "b", "c", "d"), { maxLength: 14 });

describe("diffLines", () => {
  it("turns a into b with the fewest edits (a longest common subsequence kept)", () => {
    fc.assert(
      fc.property(lines, lines, (a, b) => {
        const edits = diffLines(a, b);
        expect(sides(edits)).toEqual({ a, b });
        expect(edits.filter((edit) => edit.op === " ").length).toBe(lcs(a, b));
      }),
      { numRuns: 400 },
    );
  });

  it("past the edit-distance cap still returns a correct diff, the middle removed then added", () => {
    const a = ["head", ...Array.from({ length: 50 }, (_, i) => `old ${i}`), "tail"];
    const b = ["head", ...Array.from({ length: 50 }, (_, i) => `new ${i}`), "tail"];
    const edits = diffLines(a, b, { maxEditDistance: 10 });
    expect(sides(edits)).toEqual({ a, b });
    expect(edits.map((edit) => edit.op).join("")).toBe(` ${"-".repeat(50)}${"+".repeat(50)} `);
  });

  it("stops searching once a shared budget is spent", () => {
    const a = ["x", "1", "2", "3", "y"];
    const b = ["x", "3", "2", "1", "y"];
    const budget = { remaining: 2 };
    const edits = diffLines(a, b, { maxEditDistance: 100, budget });
    expect(sides(edits)).toEqual({ a, b });
    expect(edits.filter((edit) => edit.op === " ")).toHaveLength(2);
    expect(budget.remaining).toBeLessThan(0);
    // With room it finds the shorter script, keeping one of the middle lines.
    expect(diffLines(a, b).filter((edit) => edit.op === " ")).toHaveLength(3);
  });
});

describe("unifiedDiff", () => {
  const a = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);

  it("prints hunks with three lines of context and diff -u line numbers", () => {
    const b = [...a];
    b[1] = "line 2 changed";
    b.splice(15, 1);
    expect(unifiedDiff(diffLines(a, b), "base/x", "head/x")).toBe(
      [
        "--- base/x",
        "+++ head/x",
        "@@ -1,5 +1,5 @@",
        " line 1",
        "-line 2",
        "+line 2 changed",
        " line 3",
        " line 4",
        " line 5",
        "@@ -13,7 +13,6 @@",
        " line 13",
        " line 14",
        " line 15",
        "-line 16",
        " line 17",
        " line 18",
        " line 19",
      ].join("\n"),
    );
  });

  it("numbers an added file from 0 and says nothing when nothing changed", () => {
    expect(unifiedDiff(diffLines([], ["x"]), "/dev/null", "head/x")).toBe(
      "--- /dev/null\n+++ head/x\n@@ -0,0 +1,1 @@\n+x",
    );
    expect(unifiedDiff(diffLines(a, a), "a", "b")).toBe("");
  });

  it("caps the lines printed and cuts long lines", () => {
    const out = unifiedDiff(diffLines([], ["x".repeat(50), ...a]), "a", "b", {
      maxLines: 5,
      maxLineChars: 10,
    });
    expect(out.split("\n")).toEqual([
      "--- a",
      "+++ b",
      "@@ -0,0 +1,21 @@",
      `+${"x".repeat(10)}…`,
      "+line 1",
      "+line 2",
      "+line 3",
      "+line 4",
      "… 16 more diff lines not shown",
    ]);
  });
});
