import { describe, expect, it } from "vitest";
import { CommandFloodGuard } from "../../../src/handlers/github/command-flood-guard.js";

describe("CommandFloodGuard", () => {
  it("admits a burst, warns once when it is spent, then ignores the person until the mute ends", () => {
    let now = 0;
    const guard = new CommandFloodGuard({ burst: 3, refillMs: 60_000, muteMs: 600_000, now: () => now });
    const decisions = Array.from({ length: 6 }, () => guard.admit("acme/config", "eve"));
    expect(decisions).toEqual(["run", "run", "run", "warn", "ignore", "ignore"]);
    now = 599_999;
    expect(guard.admit("acme/config", "eve")).toBe("ignore");
    now = 600_000;
    expect(guard.admit("acme/config", "eve")).toBe("run");
  });

  it("keeps people and repositories apart, and gives back the token of a command that ran", () => {
    const guard = new CommandFloodGuard({ burst: 1, now: () => 0 });
    expect(guard.admit("acme/config", "eve")).toBe("run");
    expect(guard.admit("acme/config", "mona")).toBe("run");
    expect(guard.admit("acme/other", "eve")).toBe("run");
    guard.refund("acme/config", "mona");
    expect(guard.admit("acme/config", "mona")).toBe("run");
    expect(guard.admit("acme/config", "eve")).toBe("warn");
  });

  it("refills one command per interval", () => {
    let now = 0;
    const guard = new CommandFloodGuard({ burst: 1, refillMs: 1_000, muteMs: 1, now: () => now });
    expect(guard.admit("r", "eve")).toBe("run");
    now = 1_000;
    expect(guard.admit("r", "eve")).toBe("run");
  });

  it("forgets the least recently seen person past its bound", () => {
    const guard = new CommandFloodGuard({ burst: 1, maxEntries: 2, now: () => 0 });
    guard.admit("r", "a");
    guard.admit("r", "b");
    guard.admit("r", "c");
    // "a" was forgotten: a full bucket again.
    expect(guard.admit("r", "a")).toBe("run");
    expect(guard.admit("r", "c")).toBe("warn");
  });
});
