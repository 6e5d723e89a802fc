import { describe, expect, it } from "vitest";
import { UserError } from "../../../src/core/errors.js";
import { parsePolicy } from "../../../src/core/policy/parse-policy.js";

function problem(input: unknown): string {
  try {
    parsePolicy(input);
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    const message = (error as Error).message;
    expect(message).not.toContain("\n");
    return message;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
}

describe("parsePolicy", () => {
  it("reads YAML text and fills the defaults", () => {
    expect(parsePolicy('range: "^1.0.0"')).toEqual({
      strategy: "semver",
      range: "^1.0.0",
      prerelease: false,
      underscoreIsBuildMetadata: false,
      ignore: [],
      order: "asc",
      platforms: [],
      allowDowngrade: false,
      pin: "tag",
    });
  });

  it("reads JSON text and already-parsed objects alike", () => {
    expect(parsePolicy('{"strategy": "numerical", "order": "desc"}')).toEqual(
      parsePolicy({ strategy: "numerical", order: "desc" }),
    );
  });

  it("reads an empty document as the default policy", () => {
    expect(parsePolicy("")).toEqual(parsePolicy({}));
  });

  it("pins a digest by default for strategy digest", () => {
    expect(parsePolicy({ strategy: "digest", tag: "latest" }).pin).toBe("digest");
  });

  it("accepts Flux's Go-style named groups (?P<ts>…) in allow", () => {
    expect(
      parsePolicy({ strategy: "numerical", allow: "^main-[a-f0-9]+-(?P<ts>[0-9]+)", extract: "$ts" }).extract,
    ).toBe("$ts");
  });

  it("names the field of an invalid semver range", () => {
    expect(problem({ range: "not a range" })).toBe(
      'policy.range: invalid semver range: improper constraint: "not a range"',
    );
  });

  it("names an unknown field and lists the known ones", () => {
    expect(problem("rnage: ^1.0.0")).toMatch(/^policy\.rnage: unknown field \(known: strategy, range/);
  });

  it("names the field of an invalid regular expression", () => {
    expect(problem({ allow: "(" })).toBe(
      "policy.allow: invalid RE2 regular expression: missing closing ): `(`",
    );
  });

  it("names allow when it uses syntax Go's RE2 lacks, such as a lookahead", () => {
    expect(problem({ allow: "^v(?=1)" })).toBe(
      "policy.allow: invalid RE2 regular expression: invalid or unsupported Perl syntax: `(?=`",
    );
  });

  it("rejects extract referencing a group allow does not define", () => {
    expect(problem({ strategy: "numerical", allow: "^(?<ts>\\d+)$", extract: "$version" })).toBe(
      "policy.extract: extract references $version, which allow does not define",
    );
  });

  it("rejects an unknown strategy naming the field", () => {
    expect(problem({ strategy: "latest" })).toMatch(/^policy\.strategy: /);
  });

  it("rejects options that do not apply to the strategy", () => {
    expect(problem({ strategy: "numerical", range: "^1" })).toBe(
      "policy.range: range applies only to strategy semver, not numerical",
    );
    expect(problem({ order: "desc" })).toBe(
      "policy.order: order applies only to strategies numerical and alphabetical",
    );
    expect(problem({ strategy: "digest" })).toMatch(/^policy\.tag: strategy digest needs tag/);
  });

  it("names the index of a bad platform and a bad minAge", () => {
    expect(problem({ platforms: ["linux/amd64", "windows"] })).toMatch(
      /^policy\.platforms\.1: invalid platform "windows"/,
    );
    expect(problem({ minAge: "soon" })).toMatch(/^policy\.minAge: invalid duration "soon"/);
  });

  it("reports broken YAML on one line", () => {
    expect(problem("range: [1, 2")).toMatch(/^policy: invalid YAML: /);
  });

  it("rejects a document that is not a mapping", () => {
    expect(problem("- 1.0.0")).toBe(
      "policy: expected a mapping of policy fields (strategy, range, allow…), got a list",
    );
    expect(problem("semver")).toMatch(/^policy: expected a mapping .* got the string "semver"$/);
  });

  it("refuses a YAML alias bomb instead of expanding it (docs/reliability.md row 29)", () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(",")}]`,
      ),
    ].join("\n");
    expect(problem(bomb)).toMatch(/^policy: invalid YAML: /);
  });
});
