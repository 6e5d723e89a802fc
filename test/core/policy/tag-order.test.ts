import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compareDecimals,
  compileIgnore,
  parseDecimal,
  parseSemver,
} from "../../../src/core/policy/tag-order.js";

describe("ignore globs", () => {
  it("compare a glob naming one tag as a string, and match the others on the pattern engine", () => {
    expect(compileIgnore("latest")("latest")).toBe(true);
    expect(compileIgnore("1.0.0")("1x0.0")).toBe(false);
    expect(compileIgnore("1.[0-4].*")("1.3.0")).toBe(true);
    expect(compileIgnore("1.[0-4].*")("1.5.0")).toBe(false);
    expect(compileIgnore("{dev,staging}-*")("staging-12")).toBe(true);
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
