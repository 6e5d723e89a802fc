/**
 * The pattern engine's time, counted rather than timed: re2js reads its input only through the
 * string's `charCodeAt` and `indexOf` (it accepts a String object), so a String subclass that
 * counts those reads counts every step any of re2js's engines (DFA, one-pass, bit-state
 * backtracker, NFA) takes over the text. A backtracking matcher re-reads the text once per
 * backtrack; RE2 reads each position a bounded number of times per instruction of the compiled
 * program, so the count is at most c · (program size) · (text length).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileGlob, type Glob } from "../../../src/core/patterns/glob.js";
import { parsePolicy } from "../../../src/core/policy/parse-policy.js";
import { selectTag } from "../../../src/core/policy/select-tag.js";

/** Text whose every read by the engine is counted. */
class CountedText extends String {
  reads = 0;
  override charCodeAt(index: number): number {
    this.reads += 1;
    return super.charCodeAt(index);
  }
  override indexOf(search: string, from?: number): number {
    // A substring search may look at every position from `from` on.
    this.reads += this.length - (from ?? 0);
    return super.indexOf(search, from);
  }
}

/** How many reads of `text` matching it against the compiled glob takes, on the production path. */
function readsToMatch(glob: Glob, text: string): { matched: boolean; reads: number } {
  const counted = new CountedText(text);
  const matched = glob.test(counted as unknown as string);
  return { matched, reads: counted.reads };
}

/** The security report's `ignore` glob: a backtracking matcher takes O(n^8) on a run of `a`s. */
const ATTACK = "*a*a*a*a*a*a*a*a*b";

describe("matching time, counted", () => {
  it("grows linearly in the text for the attacker's glob, from 36 to 4096 characters", () => {
    const glob = compileGlob(ATTACK);
    const lengths = [36, 46, 56, 66, 128, 256, 512, 1024, 2048, 4096];
    const counts = lengths.map((length) => readsToMatch(glob, "a".repeat(length)));
    expect(counts.every((count) => !count.matched)).toBe(true);
    // Per character, the count stays what it is at 36 characters (within 2x), where a backtracking
    // matcher's grows as n^7: reads(4096) / reads(36) is at most twice 4096 / 36.
    const perCharacter = counts.map((count, index) => count.reads / lengths[index]!);
    for (const ratio of perCharacter) expect(ratio).toBeLessThanOrEqual(2 * perCharacter[0]!);
    // And the bound itself: at most 4 reads per instruction-sized piece of the glob per character.
    counts.forEach((count, index) =>
      expect(count.reads).toBeLessThanOrEqual(4 * ATTACK.length * (lengths[index]! + 1)),
    );
  });

  it("stays within c · (pattern length) · (text length) for any glob of the documented syntax and any text", () => {
    const atom = fc.constantFrom(
      "a",
      "b",
      "-",
      ".",
      "*",
      "?",
      "[a-b]",
      "[!a]",
      "{a,b*}",
      "@(a|ab)",
      "+(a|b)",
      "*(ab)",
    );
    const glob = fc.array(atom, { minLength: 1, maxLength: 12 }).map((parts) => parts.join(""));
    const text = fc.stringMatching(/^[ab.-]{1,300}$/);
    fc.assert(
      fc.property(glob, text, (pattern, input) => {
        const compiled = compileGlob(pattern);
        const { matched, reads } = readsToMatch(compiled, input);
        expect(matched).toBe(compiled.test(input));
        expect(reads).toBeLessThanOrEqual(4 * compiled.source.length * (input.length + 1));
      }),
      { numRuns: 400, seed: 23 },
    );
  });
});

describe("the counter", () => {
  /** A backtracking `*` matcher reading through the same counter: what the engine must not be. */
  function backtrack(pattern: string, text: CountedText, p = 0, t = 0): boolean {
    if (p === pattern.length) return t === text.length;
    if (pattern[p] === "*") {
      for (let from = t; from <= text.length; from += 1)
        if (backtrack(pattern, text, p + 1, from)) return true;
      return false;
    }
    return (
      t < text.length &&
      text.charCodeAt(t) === pattern.charCodeAt(p) &&
      backtrack(pattern, text, p + 1, t + 1)
    );
  }

  it("sees a backtracking matcher's reads grow faster than the text (so a linear count means something)", () => {
    const reads = [16, 32].map((length) => {
      const text = new CountedText("a".repeat(length));
      expect(backtrack("*a*a*a*b", text)).toBe(false);
      return text.reads;
    });
    expect(reads[1]! / reads[0]!).toBeGreaterThan(8);
  });
});

describe("the attacker's ignore glob through tag selection", () => {
  it("chooses among tags including a 128-character run of a's at once (a backtracking matcher runs for hours)", () => {
    const policy = parsePolicy({ range: "^1.0.0", ignore: [ATTACK] });
    const tags = ["1.0.0", "1.1.0", "a".repeat(128), `1.2.0-${"a".repeat(100)}`, "1.3.0"].map((tag) => ({
      tag,
    }));
    const selection = selectTag(tags, { policy, now: new Date("2026-01-01T00:00:00Z") });
    expect(selection).toMatchObject({ kind: "selected", tag: "1.3.0" });
  });
});
