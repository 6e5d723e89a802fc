import fc from "fast-check";
import { minimatch } from "minimatch";
import { describe, expect, it } from "vitest";
import {
  compareDecimals,
  compileGlob,
  parseDecimal,
  parseSemver,
} from "../../../src/core/policy/tag-order.js";

describe("ignore globs", () => {
  it("match exactly as minimatch does, for any simple glob and tag", () => {
    const glob = fc.stringMatching(/^[a-c1.*?-]{0,6}$/);
    const tag = fc.stringMatching(/^[a-c1][a-c1._-]{0,7}$/);
    fc.assert(
      fc.property(glob, tag, (pattern, name) => {
        expect(compileGlob(pattern)(name)).toBe(
          minimatch(name, pattern, { dot: true, nocomment: true, nonegate: true }),
        );
      }),
      { numRuns: 2000, seed: 7 },
    );
  });

  it("hand richer globs (classes, braces) to minimatch", () => {
    expect(compileGlob("1.[0-4].*")("1.3.0")).toBe(true);
    expect(compileGlob("1.[0-4].*")("1.5.0")).toBe(false);
    expect(compileGlob("{dev,staging}-*")("staging-12")).toBe(true);
  });

  it("treat dots and dashes as literals, not regex syntax", () => {
    expect(compileGlob("1.0-*")("1x0-rc")).toBe(false);
    expect(compileGlob("1.0-*")("1.0-rc")).toBe(true);
  });
});

describe("decimals", () => {
  const value = (text: string) => {
    const decimal = parseDecimal(text);
    if (decimal === undefined) throw new Error(`unreadable ${text}`);
    return decimal;
  };

  it("order like the numbers they spell, exactly, for any two integers", () => {
    fc.assert(
      fc.property(fc.bigInt(), fc.bigInt(), (a, b) => {
        expect(Math.sign(compareDecimals(value(String(a)), value(String(b))))).toBe(
          a === b ? 0 : a > b ? 1 : -1,
        );
      }),
      { numRuns: 500, seed: 11 },
    );
  });

  it("read leading zeros, trailing fraction zeros and negative zero as the same number", () => {
    expect(compareDecimals(value("007"), value("7"))).toBe(0);
    expect(compareDecimals(value("1.50"), value("1.5"))).toBe(0);
    expect(compareDecimals(value("-0"), value("0"))).toBe(0);
    expect(compareDecimals(value("-2"), value("-10"))).toBeGreaterThan(0);
    expect(compareDecimals(value("0.5"), value("0.45"))).toBeGreaterThan(0);
  });

  it("refuse exponents, hex, infinities and empty text", () => {
    for (const text of ["1e5", "0x10", "Inf", "NaN", "", "1.", ".5", "1_000"])
      expect(parseDecimal(text)).toBeUndefined();
  });
});

describe("semver reading", () => {
  it("accepts strict versions with an optional v and refuses partial or coerced ones", () => {
    expect(parseSemver("v1.2.3")?.version).toBe("1.2.3");
    expect(parseSemver("1.2.3-rc.1_b7")).toBeUndefined();
    expect(parseSemver("1.2.3-rc.1_b7", true)?.build).toEqual(["b7"]);
    for (const text of ["1.2", "v1", "20240101", "V1.2.3", "=1.2.3", "1.2.3.4", "01.2.3", "latest"])
      expect(parseSemver(text)).toBeUndefined();
  });
});
