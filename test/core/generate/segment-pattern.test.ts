import { describe, expect, it } from "vitest";
import { compileSegmentPattern, segmentPatternProblem } from "../../../src/core/generate/segment-pattern.js";
import {
  capturePlaceholders,
  fillTemplate,
  templateProblem,
  TemplateError,
} from "../../../src/core/generate/template.js";

describe("segment patterns", () => {
  it("matches one segment per wildcard segment and captures each whole", () => {
    const pattern = compileSegmentPattern("apps/*/overlays/staging");
    expect(pattern.match("apps/shop/overlays/staging")).toEqual(["shop"]);
    expect(pattern.match("apps/shop/overlays/prod")).toBeUndefined();
    expect(pattern.match("apps/shop/extra/overlays/staging")).toBeUndefined();
    expect(pattern.match("apps/overlays/staging")).toBeUndefined();
    const image = compileSegmentPattern("ghcr.io/*/svc-*");
    expect(image.match("ghcr.io/team-a/svc-cart")).toEqual(["team-a", "svc-cart"]);
    expect(image.match("ghcr.io/team-a/cart")).toBeUndefined();
    expect(compileSegmentPattern("ghcr.io/acme/{shop,cart}").match("ghcr.io/acme/cart")).toEqual(["cart"]);
  });

  it("reads a literal segment as written, a host with a port included", () => {
    const pattern = compileSegmentPattern("127.0.0.1:5000/acme/*");
    expect(pattern.match("127.0.0.1:5000/acme/shop")).toEqual(["shop"]);
    expect(pattern.match("127.0.0.1:5001/acme/shop")).toBeUndefined();
  });

  it.each([
    ["", "pattern is empty"],
    ["apps//staging", "empty segment"],
    ["/apps/*", "empty segment"],
    ["apps/*/", "empty segment"],
    ["apps/../*", "segments . and .. are not allowed"],
    ["apps/**/staging", "** is not supported"],
    [Array.from({ length: 33 }, () => "a").join("/"), "more than 32 segments"],
  ])("refuses %j in one line", (pattern, message) => {
    expect(segmentPatternProblem(pattern)).toContain(message);
  });

  it("matches an adversarial segment in linear time (the policy's engine)", () => {
    const pattern = compileSegmentPattern(`x/${"*a".repeat(30)}b`);
    const long = "a".repeat(100_000);
    // A backtracking matcher takes exponential time here; the linear engine answers at once.
    expect(pattern.match(`x/${long}`)).toBeUndefined();
  });
});

describe("templates", () => {
  it("fills placeholders and says a missing or unknown one in one line", () => {
    expect(fillTemplate("{1}-staging", capturePlaceholders(["shop"]))).toBe("shop-staging");
    expect(() => fillTemplate("{2}-staging", capturePlaceholders(["shop"]))).toThrow(TemplateError);
    expect(() => fillTemplate("{2}-staging", capturePlaceholders(["shop"]))).toThrow(
      '{2} in "{2}-staging" has no value here',
    );
    expect(templateProblem("{team}-x", ["1", "2"])).toBe(
      'unknown placeholder {team} in "{team}-x" (known: {1}, {2})',
    );
    expect(templateProblem("acme/{name}", ["name"])).toBeUndefined();
  });
});
