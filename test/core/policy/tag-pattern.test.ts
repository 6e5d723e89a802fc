import { describe, expect, it } from "vitest";
import {
  compileAllow,
  compileExtract,
  namedGroups,
  templateReferences,
  unsupportedSyntax,
} from "../../../src/core/policy/tag-pattern.js";

function expand(pattern: string, template: string, tag: string): string | undefined {
  const match = compileAllow(pattern).exec(tag);
  return match === null ? undefined : compileExtract(template)(match.groups ?? {});
}

describe("allow patterns", () => {
  it("translates Go's (?P<name>…) into a JavaScript named group", () => {
    expect(compileAllow("^(?P<ts>\\d+)$").exec("123")?.groups).toEqual({ ts: "123" });
  });

  it("refuses backreferences and lookarounds, which Go's RE2 (Flux, Argo) does not have", () => {
    for (const pattern of ["^(a)\\1$", "^(?<x>a)\\k<x>$", "^v(?=1)", "^v(?!0)", "(?<=v)1", "(?<!v)1"]) {
      expect(unsupportedSyntax(pattern)).toBeDefined();
      expect(() => compileAllow(pattern)).toThrow(SyntaxError);
    }
  });

  it("does not mistake escaped or bracketed characters for those constructs", () => {
    for (const pattern of ["^\\(?=$", "^[(?=]+$", "^(?:a|b)$", "^(?<name>x)$", "^(?P<ts>\\d+)$", "\\\\1"]) {
      expect(unsupportedSyntax(pattern)).toBeUndefined();
    }
  });

  it("lists the named groups of either spelling", () => {
    expect([...namedGroups("^(?P<a>x)-(?<b>y)$")]).toEqual(["a", "b"]);
  });
});

describe("extract templates (Go Regexp.Expand semantics, as Flux uses)", () => {
  it("expands $name and ${name}", () => {
    expect(expand("^main-(?<sha>[a-f0-9]+)-(?<ts>\\d+)$", "$ts", "main-abc-17")).toBe("17");
    expect(expand("^main-(?<sha>[a-f0-9]+)-(?<ts>\\d+)$", "${ts}.${sha}", "main-abc-17")).toBe("17.abc");
  });

  it("keeps literal text and reads $$ as a dollar", () => {
    expect(expand("^(?<v>\\d+)$", "v$v-$$", "42")).toBe("v42-$");
  });

  it("expands a group that did not take part to the empty string", () => {
    expect(expand("^(?<a>x)?(?<b>y)$", "[$a|$b]", "y")).toBe("[|y]");
  });

  it("reads the longest name after $, so $tsx is group tsx, not $ts followed by x", () => {
    expect(templateReferences("$tsx")).toEqual(["tsx"]);
    expect(templateReferences("${ts}x")).toEqual(["ts"]);
  });
});
