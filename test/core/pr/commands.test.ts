import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatCommand, parseCommands, type Command } from "../../../src/core/pr/commands.js";

describe("comment commands", () => {
  it("reads /promote with and without an image", () => {
    expect(parseCommands("/promote prod")).toEqual([{ name: "promote", environment: "prod" }]);
    expect(parseCommands("/promote prod shop@1.8.0")).toEqual([
      { name: "promote", environment: "prod", image: { name: "shop", tag: "1.8.0" } },
    ]);
  });

  it("reads rollback, hold, unhold and status, one per line", () => {
    expect(parseCommands("Thanks!\n/rollback prod\n/hold staging\n/unhold staging\n/ferry status")).toEqual([
      { name: "rollback", environment: "prod" },
      { name: "hold", environment: "staging" },
      { name: "unhold", environment: "staging" },
      { name: "status" },
    ]);
  });

  it("reads /unfloor with an environment and an optional image name, and nothing more", () => {
    expect(parseCommands("/unfloor staging\n/unfloor prod shop\n/unfloor prod shop@1.0.0\n/unfloor")).toEqual(
      [
        { name: "unfloor", environment: "staging" },
        { name: "unfloor", environment: "prod", imageName: "shop" },
      ],
    );
  });

  it("requires the command to be the first word and the whole line to match", () => {
    expect(parseCommands("please /promote prod")).toEqual([]);
    expect(parseCommands("/promote prod now")).toEqual([]);
    expect(parseCommands("/promoteprod")).toEqual([]);
    expect(parseCommands("/promote Prod")).toEqual([]);
    expect(parseCommands("/promote prod shop@v1\n\n---")).toEqual([
      { name: "promote", environment: "prod", image: { name: "shop", tag: "v1" } },
    ]);
  });

  it("ignores commands inside code blocks and quotes", () => {
    expect(parseCommands("```\n/promote prod\n```\n> /promote prod")).toEqual([]);
  });

  describe("takes commands only from text GitHub shows as a paragraph", () => {
    const hidden: Record<string, string> = {
      "a four-backtick fence around a three-backtick line": "````\n```\n/promote prod\n````",
      "a tilde fence": "~~~\n/promote prod\n~~~",
      "a tilde fence holding a backtick line": "~~~\n```\n/promote prod\n~~~",
      "an unclosed fence (runs to the end)": "```\n/promote prod",
      "an indented code block": "Run this later:\n\n    /promote prod",
      "an HTML comment block": "<!--\n/promote prod\n-->",
      "an HTML comment inside a paragraph": "looks fine <!--\n/promote prod\n--> to me",
      "an HTML block": "<details>\n/promote prod\n</details>",
      "a lazy blockquote continuation": "> earlier words\n/promote prod",
      "a nested blockquote": "> > /promote prod",
      "a list item": "- /promote prod",
      "an ordered list item": "1. /promote prod",
      "a heading": "# /promote prod",
      "a setext heading": "/promote prod\n---",
      "inline code": "`/promote prod`",
      "a link": "[/promote prod](https://example.com)",
      "emphasis on the line": "/promote *prod*",
      "a table cell": "| a |\n|---|\n| /promote prod |",
      "a paragraph inside a collapsed <details>":
        "<details>\n<summary>Plan</summary>\n\n/promote prod\n\n</details>",
      "a paragraph inside an open <details>": "<details open>\n\n/promote prod\n\n</details>",
      "a paragraph inside nested <details>":
        "<details>\n\n<details>\n\ninner\n\n</details>\n\n/promote prod\n\n</details>",
      "a paragraph inside a <details> never closed": "<details><summary>x</summary>\n\n/promote prod",
      "a paragraph after an inline <details>": "see <details>\n\n/promote prod",
    };
    for (const [form, body] of Object.entries(hidden))
      it(`ignores a command in ${form}`, () => {
        expect(parseCommands(body)).toEqual([]);
      });

    const shown: Record<string, string> = {
      "a comment of one line": "/promote prod",
      "a line after text in the same paragraph": "LGTM, shipping it.\n/promote prod",
      "a paragraph after a quote and a blank line": "> can we ship?\n\n/promote prod",
      "a paragraph after a closed fence": "```\nlogs\n```\n/promote prod",
      "a paragraph after a closed four-backtick fence": "````\n```\n````\n/promote prod",
      "an indent of up to three spaces": "   /promote prod",
      "Windows line endings": "thanks\r\n/promote prod\r\n",
      "a hard line break": "/promote prod  \nthanks",
      "a paragraph after an HTML comment": "<!-- a note -->\n\n/promote prod",
      "a paragraph after a closed <details>": "<details>\n\nlogs\n\n</details>\n\n/promote prod",
      "a paragraph after a comment that names <details>": "<!-- <details> -->\n\n/promote prod",
    };
    for (const [form, body] of Object.entries(shown))
      it(`reads a command in ${form}`, () => {
        expect(parseCommands(body)).toEqual([{ name: "promote", environment: "prod" }]);
      });

    it("reads nothing past GitHub's comment length limit", () => {
      expect(parseCommands(`${"x".repeat(70_000)}\n\n/promote prod`)).toEqual([]);
      expect(parseCommands(`${"x".repeat(1_000)}\n\n/promote prod`)).toEqual([
        { name: "promote", environment: "prod" },
      ]);
    });
  });

  it("reads --override-freeze with its quoted reason, after the optional image", () => {
    expect(parseCommands('/promote prod --override-freeze "hotfix for INC-42"')).toEqual([
      { name: "promote", environment: "prod", overrideFreeze: "hotfix for INC-42" },
    ]);
    expect(parseCommands('/rollback prod shop@1.7.0 --override-freeze "bad release"')).toEqual([
      {
        name: "rollback",
        environment: "prod",
        image: { name: "shop", tag: "1.7.0" },
        overrideFreeze: "bad release",
      },
    ]);
    // No reason, an empty one, an unquoted one, one past 140 characters, a quote inside: not a command.
    for (const line of [
      "/promote prod --override-freeze",
      '/promote prod --override-freeze ""',
      '/promote prod --override-freeze "  "',
      "/promote prod --override-freeze hotfix",
      `/promote prod --override-freeze "${"a".repeat(141)}"`,
      '/promote prod --override-freeze "a"b"',
    ])
      expect(parseCommands(line)).toEqual([]);
  });

  it("refuses tags that are not OCI tags", () => {
    expect(parseCommands("/promote prod shop@.hidden")).toEqual([]);
    expect(parseCommands(`/promote prod shop@${"a".repeat(129)}`)).toEqual([]);
  });

  it("reads back every command it formats", () => {
    const name = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,15}$/);
    const command: fc.Arbitrary<Command> = fc.oneof(
      fc.record({ name: fc.constantFrom("promote" as const, "rollback" as const), environment: name }),
      fc.record({
        name: fc.constantFrom("promote" as const, "rollback" as const),
        environment: name,
        image: fc.record({ name, tag: fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,20}$/) }),
      }),
      fc.record({ name: fc.constantFrom("hold" as const, "unhold" as const), environment: name }),
      fc.constant({ name: "status" as const }),
    );
    fc.assert(
      fc.property(command, (value) => {
        expect(parseCommands(formatCommand(value))).toEqual([value]);
      }),
    );
  });
});

describe("/ferry history", () => {
  it("takes an environment, an optional image and one of --since or --at with an ISO date", () => {
    expect(parseCommands("/ferry history prod")).toEqual([{ name: "history", environment: "prod" }]);
    expect(parseCommands("/ferry history prod shop --at 2026-03-10T14:00Z")).toEqual([
      { name: "history", environment: "prod", imageName: "shop", at: "2026-03-10T14:00Z" },
    ]);
    expect(parseCommands("/ferry history prod --since 2026-03-01")).toEqual([
      { name: "history", environment: "prod", since: "2026-03-01" },
    ]);
  });

  it("is not a command with a date it cannot read, both flags, or inside code", () => {
    expect(parseCommands("/ferry history prod --at last-tuesday")).toEqual([]);
    expect(parseCommands("/ferry history prod --at 2026-13-45")).toEqual([]);
    expect(parseCommands("/ferry history prod --since 2026-03-01 --at 2026-03-02")).toEqual([]);
    expect(parseCommands("`/ferry history prod`")).toEqual([]);
    expect(parseCommands("```\n/ferry history prod\n```")).toEqual([]);
  });
});

describe("/ferry why", () => {
  it("takes an environment and an image, with an optional tag", () => {
    expect(parseCommands("/ferry why prod shop")).toEqual([
      { name: "why", environment: "prod", imageName: "shop" },
    ]);
    expect(parseCommands("/ferry why prod shop@1.8.0")).toEqual([
      { name: "why", environment: "prod", imageName: "shop", tag: "1.8.0" },
    ]);
  });

  it("is not a command without an image, with a bad tag, extra words, or inside code", () => {
    expect(parseCommands("/ferry why prod")).toEqual([]);
    expect(parseCommands("/ferry why prod shop@-bad")).toEqual([]);
    expect(parseCommands("/ferry why prod shop please")).toEqual([]);
    expect(parseCommands("`/ferry why prod shop`")).toEqual([]);
  });
});
