import fc from "fast-check";
import { minimatch } from "minimatch";
import { describe, expect, it } from "vitest";
import { MAX_PATTERN_LENGTH } from "../../../src/core/patterns/engine.js";
import { compileGlob, globProblem } from "../../../src/core/patterns/glob.js";

/** minimatch as the config used to read `ignore` (a dev dependency, kept only as this test's oracle). */
const oracle = (pattern: string, name: string) =>
  minimatch(name, pattern, { dot: true, nocomment: true, nonegate: true });

/** Globs built from the syntax docs/config.md documents, over a small alphabet so that they match often. */
const atom: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("a", "b", "1", ".", "-", "*", "?", "**"),
  fc.constantFrom("[a-b]", "[!a]", "[^1.]", "[[:digit:]]", "[]a]", "[a-]"),
);
const group: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom("{", "@(", "?(", "+(", "*("),
    fc.array(fc.array(atom, { minLength: 1, maxLength: 3 }), { minLength: 2, maxLength: 3 }),
  )
  .map(([open, branches]) =>
    open === "{"
      ? `{${branches.map((b) => b.join("")).join(",")}}`
      : `${open}${branches.map((b) => b.join("")).join("|")})`,
  );
const globs = fc
  .array(fc.oneof({ weight: 4, arbitrary: atom }, { weight: 1, arbitrary: group }), {
    maxLength: 5,
  })
  .map((parts) => parts.join(""));
const tags = fc.stringMatching(/^[ab1][ab1.-]{0,7}$/);

describe("globs on the one pattern engine", () => {
  it("match as minimatch does for names without /, for any glob of the documented syntax", () => {
    fc.assert(
      fc.property(globs, tags, (pattern, name) => {
        expect(compileGlob(pattern).test(name)).toBe(oracle(pattern, name));
      }),
      { numRuns: 3000, seed: 17 },
    );
  });

  it("translate to an anchored RE2 expression, dots and dashes literal", () => {
    expect(compileGlob("1.0-*").test("1x0-rc")).toBe(false);
    expect(compileGlob("1.0-*").test("1.0-rc")).toBe(true);
    expect(compileGlob("*-debug").test("1.0-debug-x")).toBe(false);
    expect(compileGlob("{dev,staging}-*").test("staging-12")).toBe(true);
    expect(compileGlob("1.[0-4].*").test("1.5.0")).toBe(false);
    expect(compileGlob("+(a|b)c").source).toBe("^(?s:(?:a|b)+c)$");
  });

  it("refuse, in one line, what RE2 cannot match or the config does not mean", () => {
    expect(globProblem("!(latest)")).toMatch(/^a negated extglob !\(…\) cannot be matched by RE2/);
    expect(globProblem("v{1..9}")).toBe(
      "the brace sequence {1..9} is not supported; list the values, e.g. {1,2,3}",
    );
    expect(globProblem("[[:tag:]]")).toBe("unknown character class [:tag:]");
    expect(globProblem("[z-a]")).toBe("invalid range z-a in a character class");
    expect(globProblem("1.0\\")).toBe("ends with a lone \\");
    expect(globProblem("@(a|b")).toBe("an extglob is not closed with )");
    expect(globProblem("a".repeat(MAX_PATTERN_LENGTH + 1))).toBe(
      `pattern is ${MAX_PATTERN_LENGTH + 1} characters long, over the 1024 limit`,
    );
    expect(globProblem("a".repeat(MAX_PATTERN_LENGTH))).toBeUndefined();
    for (const problem of ["!(x)", "{1..2}", "[z-a]"].map((glob) => globProblem(glob)))
      expect(problem).not.toContain("\n");
  });

  it("keep *, ? and classes inside one path segment and let ** cross segments, in the path syntax", () => {
    const path = (pattern: string, name: string) => compileGlob(pattern, "path").test(name);
    expect(path("overlays/*", "overlays/prod")).toBe(true);
    expect(path("overlays/*", "overlays/prod/kustomization.yaml")).toBe(false);
    expect(path("overlays/?rod", "overlays/prod")).toBe(true);
    expect(path("a[!x]b", "a/b")).toBe(false);
    expect(path("overlays/**", "overlays/prod/values.yaml")).toBe(true);
    expect(path("**/values.yaml", "values.yaml")).toBe(true);
    expect(path("**/values.yaml", "charts/shop/values.yaml")).toBe(true);
    expect(path("a/**/b", "a/b")).toBe(true);
    expect(path("a/**/b", "a/x/y/b")).toBe(true);
    expect(path("a/**/b", "a/xb")).toBe(false);
  });

  it("take only * as special in the wildcard syntax (identities and builder ids)", () => {
    const id = compileGlob(
      "https://github.com/acme/*/.github/workflows/release.yml@refs/tags/v?.[0-9]",
      "wildcard",
    );
    expect(id.test("https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/v?.[0-9]")).toBe(
      true,
    );
    expect(id.test("https://github.com/acme/shop/.github/workflows/release.yml@refs/tags/v1.5")).toBe(false);
    expect(compileGlob("a*b", "wildcard").test("a/x/b")).toBe(true);
  });
});
