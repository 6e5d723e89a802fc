/**
 * CODEOWNERS as GitHub reads it: the example file and rules of
 * https://docs.github.com/en/repositories/managing-your-repositorys-settings-and-features/customizing-your-repository/about-code-owners
 * ("CODEOWNERS syntax", "Example of a CODEOWNERS file", "Syntax exceptions").
 */
import { describe, expect, it } from "vitest";
import {
  CodeownersError,
  MAX_CODEOWNERS_BYTES,
  MAX_CODEOWNERS_RULES,
  ownersOf,
  ownersOfAny,
  parseCodeowners,
} from "../../../src/core/rights/codeowners.js";
import { compileCodeownersPattern } from "../../../src/core/patterns/codeowners-pattern.js";

/** GitHub's example paths, spelled so that they are not read as links to this repo's docs/. */
const DOCS = "docs";

const owners = (text: string, path: string) => ownersOf(parseCodeowners("CODEOWNERS", text), path);
const who = (text: string, path: string) => {
  const found = owners(text, path);
  return [...found.teams.map((team) => `@${team}`), ...found.users.map((user) => `@${user}`)];
};

describe("the CODEOWNERS example of GitHub's docs", () => {
  it("gives every file to the global owners unless a later match takes precedence", () => {
    const file = "*       @global-owner1 @global-owner2\n*.js    @js-owner #This is an inline comment.\n";
    expect(who(file, "README.md")).toEqual(["@global-owner1", "@global-owner2"]);
    expect(who(file, "deep/dir/file.txt")).toEqual(["@global-owner1", "@global-owner2"]);
    // "the last matching pattern takes the most precedence", and the inline comment is no owner.
    expect(who(file, "src/app.js")).toEqual(["@js-owner"]);
  });

  it("reads teams as @org/team-name and leaves e-mail addresses out (no login to check)", () => {
    const file = "*.txt @octo-org/octocats\n*.go docs@example.com\n";
    expect(owners(file, "a/b.txt")).toEqual({ users: [], teams: ["octo-org/octocats"] });
    expect(owners(file, "main.go")).toEqual({ users: [], teams: [] });
  });

  it("/build/logs/ owns the build/logs folder at the root and everything below it", () => {
    const file = "/build/logs/ @doctocat\n";
    expect(who(file, "build/logs/a.log")).toEqual(["@doctocat"]);
    expect(who(file, "build/logs/deep/b.log")).toEqual(["@doctocat"]);
    expect(who(file, "x/build/logs/a.log")).toEqual([]);
  });

  it("docs/* matches a file right in that folder (getting-started.md) but not one nested deeper", () => {
    const file = "docs/*  @docs\n";
    expect(who(file, `${DOCS}/getting-started.md`)).toEqual(["@docs"]);
    expect(who(file, `${DOCS}/build-app/troubleshooting.md`)).toEqual([]);
  });

  it("apps/ owns any file in an apps folder anywhere; /docs/ only the root one", () => {
    expect(who("apps/ @octocat\n", "apps/a.yaml")).toEqual(["@octocat"]);
    expect(who("apps/ @octocat\n", "deploy/apps/shop/a.yaml")).toEqual(["@octocat"]);
    expect(who("/docs/ @doctocat\n", `${DOCS}/a/b.md`)).toEqual(["@doctocat"]);
    expect(who("/docs/ @doctocat\n", `site/${DOCS}/b.md`)).toEqual([]);
  });

  it("**/logs owns any file in a logs folder: /build/logs, /scripts/logs, /deeply/nested/logs", () => {
    for (const path of ["build/logs/a", "scripts/logs/b", "deeply/nested/logs/c", "logs/d"])
      expect(who("**/logs @octocat\n", path)).toEqual(["@octocat"]);
    expect(who("**/logs @octocat\n", "build/catalogs/a")).toEqual([]);
  });

  it("/apps/github with no owners leaves that folder unowned; with @doctocat gives it to them", () => {
    const unowned = "/apps/ @octocat\n/apps/github\n";
    expect(who(unowned, "apps/shop/a.yaml")).toEqual(["@octocat"]);
    expect(who(unowned, "apps/github/a.yaml")).toEqual([]);
    const own = "/apps/ @octocat\n/apps/github @doctocat\n";
    expect(who(own, "apps/github/a.yaml")).toEqual(["@doctocat"]);
  });

  it("/scripts/ with two owners: either of them", () => {
    expect(who("/scripts/ @doctocat @octocat\n", "scripts/x.sh")).toEqual(["@doctocat", "@octocat"]);
  });

  it("is case-sensitive, as GitHub's file system is", () => {
    expect(who("/Apps/ @octocat\n", "apps/a.yaml")).toEqual([]);
  });
});

describe("what does not work in CODEOWNERS (the syntax exceptions) is skipped, line by line", () => {
  it("skips ! negation, [ ] ranges and an escaped leading #, keeping the other lines", () => {
    const parsed = parseCodeowners(
      ".github/CODEOWNERS",
      "* @all\n!apps/ @nobody\napps/[ab]/ @ranges\n\\#notes @hash\n",
    );
    expect(parsed.rules.map((rule) => rule.source)).toEqual(["*"]);
    expect(parsed.skipped.map((skip) => skip.line)).toEqual([2, 3, 4]);
    expect(ownersOf(parsed, "apps/a/x")).toEqual({ users: ["all"], teams: [] });
  });

  it("skips a line with something that is not an owner (the owners before it do not count)", () => {
    const parsed = parseCodeowners("CODEOWNERS", "* @all\n/apps/ @team TODO\n");
    expect(parsed.skipped).toEqual([{ line: 2, message: expect.stringContaining("TODO") }]);
    expect(ownersOf(parsed, "apps/x")).toEqual({ users: ["all"], teams: [] });
  });

  it("reads a path with an escaped space", () => {
    expect(who("/my\\ apps/ @octocat\n", "my apps/a.yaml")).toEqual(["@octocat"]);
  });
});

describe("bounds", () => {
  it("does not load a file of 3 MB or more, as GitHub does not", () => {
    expect(() => parseCodeowners("CODEOWNERS", "#".repeat(MAX_CODEOWNERS_BYTES + 1))).toThrow(
      CodeownersError,
    );
  });

  it("refuses more rules than it reads, with a one-line reason", () => {
    const text = Array.from({ length: MAX_CODEOWNERS_RULES + 1 }, (_, i) => `/f${i} @a`).join("\n");
    expect(() => parseCodeowners("CODEOWNERS", text)).toThrow(/more than 5000 rules/);
  });

  it("matches a pathological pattern in linear time (RE2), whatever the path", () => {
    const pattern = compileCodeownersPattern(`${"*a".repeat(200)}*/`);
    expect(pattern.test(`${"a".repeat(199)}/x`)).toBe(false);
    expect(pattern.test(`${"a".repeat(5000)}/x`)).toBe(true);
  });

  it("collects the owners of several files once each", () => {
    const parsed = parseCodeowners("CODEOWNERS", "/a/ @acme/x @mona\n/b/ @acme/x @hubot\n");
    expect(ownersOfAny(parsed, ["a/1", "b/2", "a/3"])).toEqual({
      users: ["hubot", "mona"],
      teams: ["acme/x"],
    });
  });
});
