import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_PATTERN_LENGTH } from "../../../src/core/patterns/engine.js";
import { compileAllow, compileExtract, templateReferences } from "../../../src/core/policy/tag-pattern.js";

function expand(pattern: string, template: string, tag: string): string | undefined {
  const match = compileAllow(pattern).match(tag);
  return match === undefined ? undefined : compileExtract(template)(match);
}

const matches = (pattern: string, tag: string): boolean => compileAllow(pattern).test(tag);

describe("allow patterns use Go's RE2 syntax, as Flux, Argo CD Image Updater and Kargo compile them", () => {
  // Syntax from https://github.com/google/re2/wiki/Syntax, which Go's regexp package implements.
  it("reads POSIX classes such as [[:digit:]] (JavaScript reads them as a set of ':', 'd', 'i'…)", () => {
    expect(matches("^v[[:digit:]]+$", "v42")).toBe(true);
    expect(matches("^v[[:digit:]]+$", "vdig")).toBe(false);
    expect(matches("^[[:alpha:]]+-[[:xdigit:]]{7}$", "main-abc1234")).toBe(true);
  });

  it("reads Unicode classes \\pL and \\p{Greek} without a u flag", () => {
    expect(matches("^\\pL+-\\d+$", "main-1")).toBe(true);
    expect(matches("^\\pL+$", "123")).toBe(false);
    expect(matches("^\\p{Greek}+$", "αβ")).toBe(true);
  });

  it("reads \\A and \\z as the start and end of the text", () => {
    expect(matches("\\A1\\.2\\.3\\z", "1.2.3")).toBe(true);
    expect(matches("\\A1\\.2\\.3\\z", "1.2.3-rc")).toBe(false);
    expect(matches("\\A1\\.2\\.3\\z", "v1.2.3")).toBe(false);
  });

  it("reads the (?i) flag group", () => {
    expect(matches("(?i)^RELEASE-\\d+$", "release-7")).toBe(true);
    expect(matches("^RELEASE-\\d+$", "release-7")).toBe(false);
  });

  it("reads named groups in Go's (?P<name>…) and in the (?<name>…) spelling", () => {
    expect(compileAllow("^(?P<ts>\\d+)-(?<sha>[a-f0-9]+)$").match("123-abc")?.named).toEqual({
      ts: "123",
      sha: "abc",
    });
    expect([...compileAllow("^(?P<a>x)-(?<b>y)$").groupNames]).toEqual(["a", "b"]);
  });

  it("refuses backreferences and lookarounds with RE2's own message, as Go's regexp.Compile does", () => {
    for (const pattern of ["^(a)\\1$", "^v(?=1)", "^v(?!0)", "(?<=v)1", "(?<!v)1"])
      expect(() => compileAllow(pattern)).toThrow(SyntaxError);
    expect(() => compileAllow("^(a)\\1$")).toThrow("invalid escape sequence: `\\1`");
  });

  it("refuses a repeat count over 1000, as RE2 does", () => {
    expect(() => compileAllow("^a{1001}$")).toThrow("invalid repeat count");
  });

  it("refuses a pattern over the length limit before compiling it", () => {
    expect(() => compileAllow("a".repeat(MAX_PATTERN_LENGTH + 1))).toThrow("over the 1024 limit");
  });

  it("compiles any text or refuses it with a SyntaxError, never another error", () => {
    const patternish = fc.stringMatching(/^[a-z0-9^$.*+?()[\]{}|\\:<>P=!-]{0,40}$/);
    fc.assert(
      fc.property(fc.oneof(patternish, fc.string({ maxLength: 40 })), (text) => {
        try {
          compileAllow(text).match("main-abc-123");
        } catch (error) {
          expect(error).toBeInstanceOf(SyntaxError);
        }
      }),
      { numRuns: 2_000, seed: 20261130 },
    );
  });

  it("searches the tag unless the pattern is anchored, like Go's MatchString", () => {
    expect(matches("abc", "xabcx")).toBe(true);
    expect(matches("^abc$", "xabcx")).toBe(false);
  });

  it("matches the nested-quantifier pattern from the ReDoS report on a long list of near misses", () => {
    // One 42-character near miss stalled V8's backtracking engine for 11.6 s; RE2 is linear.
    const pattern = compileAllow("^main-([a-z0-9]+-?)+-[0-9a-f]{7,40}$");
    const nearMisses = Array.from({ length: 2_000 }, (_, i) => `main-${"a".repeat(30 + (i % 60))}!`);
    expect(nearMisses.filter((tag) => pattern.test(tag))).toEqual([]);
    expect(pattern.test("main-feature-x-1a2b3c4")).toBe(true);
  });
});

describe("extract templates (Go Regexp.Expand semantics, as Flux's filter uses)", () => {
  it("expands $name and ${name}", () => {
    expect(expand("^main-(?<sha>[a-f0-9]+)-(?<ts>\\d+)$", "$ts", "main-abc-17")).toBe("17");
    expect(expand("^main-(?<sha>[a-f0-9]+)-(?<ts>\\d+)$", "${ts}.${sha}", "main-abc-17")).toBe("17.abc");
  });

  it("expands numbered groups $1 and ${1} (fluxcd/image-reflector-controller internal/policy/filter_test.go)", () => {
    expect(["ver1", "ver2", "ver3", "rel1"].map((tag) => expand("ver(\\d+)", "$1", tag))).toEqual([
      "1",
      "2",
      "3",
      undefined,
    ]);
    expect(expand("^(\\d+)\\.(\\d+)$", "${2}x$1", "4.7")).toBe("7x4");
    expect(expand("^(?P<v>\\d+)$", "$1", "9")).toBe("9");
  });

  it("keeps literal text and reads $$ as a dollar", () => {
    expect(expand("^(?<v>\\d+)$", "v$v-$$", "42")).toBe("v42-$");
  });

  it("expands a group that did not take part to the empty string", () => {
    expect(expand("^(?<a>x)?(?<b>y)$", "[$a|$b]", "y")).toBe("[|y]");
  });

  it("reads the longest name after $, so $tsx is group tsx and $1x is group 1x, as Go does", () => {
    expect(templateReferences("$tsx")).toEqual([{ name: "tsx" }]);
    expect(templateReferences("${ts}x")).toEqual([{ name: "ts" }]);
    expect(templateReferences("$1x")).toEqual([{ name: "1x" }]);
    expect(templateReferences("${1}x$10")).toEqual([{ index: 1 }, { index: 10 }]);
  });
});
