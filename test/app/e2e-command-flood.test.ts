/**
 * A reader floods a thread with commands, through the real comment route (the GitHub emulator, signed
 * webhooks, Ferry's server): one comment runs at most MAX_COMMANDS_PER_COMMENT commands and its reply
 * is bounded in size and mentions; commands that succeed still count for the hour, so consecutive
 * comments are throttled too (docs/security.md "Comment commands").
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { repos } from "../../packages/sandbox/src/github/index.js";
import {
  MAX_COMMANDS_PER_COMMENT,
  MAX_REPLY_CHARS,
  MAX_REPLY_MENTIONS,
} from "../../src/core/pr/reply-bounds.js";
import { COMMANDS_PER_HOUR } from "../../src/handlers/github/command-flood-guard.js";
import { commentsOn, startWorld, type World } from "../support/app-e2e-world.js";

const mentions = (text: string) => (text.match(/(?<![\w`@])@[A-Za-z0-9]/g) ?? []).length;

describe("a reader's command flood (end to end)", () => {
  let world: World;
  let issue: number;
  beforeEach(async () => {
    world = await startWorld({ ci: true });
    // A few Ferry merges, so that every history answer has entries naming who merged.
    for (const tag of ["1.8.0", "1.9.0"]) await world.push(tag);
    repos.setCollaborator(world.emu, "acme", "config", "eve", "read");
    issue = await world.openIssue();
    await world.settle();
  });
  afterEach(async () => {
    await world.close();
  });

  const post = async (body: string): Promise<string[]> => {
    const before = (await commentsOn(world, issue)).length;
    await world.as.eve.rest.issues.createComment({
      owner: "acme",
      repo: "config",
      issue_number: issue,
      body,
    });
    await world.settle();
    return (await commentsOn(world, issue)).slice(before + 1);
  };

  it("answers a comment of 50 `/ferry history staging` lines with one bounded reply running only the first few", async () => {
    const one = await post("/ferry history staging");
    expect(one).toHaveLength(1);
    const single = one[0]!;
    // Each answer names who made each change: five of them would pass the mention cap.
    expect(mentions(single) * MAX_COMMANDS_PER_COMMENT).toBeGreaterThan(MAX_REPLY_MENTIONS);
    const [reply, ...more] = await post(
      Array.from({ length: 50 }, () => "/ferry history staging").join("\n"),
    );
    expect(more).toEqual([]);
    expect(reply!.length).toBeLessThanOrEqual(MAX_REPLY_CHARS);
    expect(mentions(reply!)).toBeLessThanOrEqual(MAX_REPLY_MENTIONS);
    // The first answers ran and the rest were answered with one line.
    expect(reply!.split(single.split("\n")[0]!).length - 1).toBe(MAX_COMMANDS_PER_COMMENT);
    expect(reply).toContain(
      `Ferry runs at most ${MAX_COMMANDS_PER_COMMENT} commands per comment; the other commands in this comment were not run.`,
    );
  });

  it("throttles consecutive comments of read-only commands that all succeed, once the hourly budget is spent", async () => {
    const comment = Array.from({ length: MAX_COMMANDS_PER_COMMENT }, () => "/ferry status").join("\n");
    const perComment = COMMANDS_PER_HOUR / MAX_COMMANDS_PER_COMMENT;
    for (let i = 0; i < perComment; i++) {
      const replies = await post(comment);
      expect(replies, `comment ${i}`).toHaveLength(1);
      expect(replies[0]).not.toMatch(/too many commands/);
    }
    expect(await post(comment)).toEqual([
      "@eve too many commands: further commands from you in acme/config are ignored for 60 minutes.",
    ]);
    expect(await post(comment)).toEqual([]);
  });
});
