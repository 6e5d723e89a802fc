import { describe, expect, it } from "vitest";
import { CommandFloodGuard, type FloodDecision } from "../../../src/handlers/github/command-flood-guard.js";

const kinds = (decisions: FloodDecision[]) => decisions.map((decision) => decision.kind);

describe("CommandFloodGuard", () => {
  it("admits a burst of refused comments, warns once when it is spent, then ignores the person until the mute ends", () => {
    let now = 0;
    const guard = new CommandFloodGuard({ burst: 3, refillMs: 60_000, muteMs: 600_000, now: () => now });
    const decisions = Array.from({ length: 6 }, () => guard.admit("acme/config", "eve", 1));
    expect(kinds(decisions)).toEqual(["run", "run", "run", "warn", "ignore", "ignore"]);
    expect(decisions[3]).toEqual({ kind: "warn", minutes: 10 });
    now = 599_999;
    expect(guard.admit("acme/config", "eve", 1).kind).toBe("ignore");
    now = 600_000;
    expect(guard.admit("acme/config", "eve", 1).kind).toBe("run");
  });

  it("keeps people and repositories apart, and gives back the comment token of a command that ran", () => {
    const guard = new CommandFloodGuard({ burst: 1, now: () => 0 });
    expect(guard.admit("acme/config", "eve", 1).kind).toBe("run");
    expect(guard.admit("acme/config", "mona", 1).kind).toBe("run");
    expect(guard.admit("acme/other", "eve", 1).kind).toBe("run");
    guard.refund("acme/config", "mona");
    expect(guard.admit("acme/config", "mona", 1).kind).toBe("run");
    expect(guard.admit("acme/config", "eve", 1).kind).toBe("warn");
  });

  it("counts every command for the hour, those that ran and gave their token back included", () => {
    let now = 0;
    const guard = new CommandFloodGuard({ perHour: 12, now: () => now });
    const decisions: FloodDecision[] = [];
    for (let i = 0; i < 5; i++) {
      decisions.push(guard.admit("acme/config", "eve", 5));
      guard.refund("acme/config", "eve");
      now += 1_000;
    }
    // 5 + 5 + the 2 left, then the person is told for how long, then silence.
    expect(decisions).toEqual([
      { kind: "run", commands: 5 },
      { kind: "run", commands: 5 },
      { kind: "run", commands: 2 },
      { kind: "warn", minutes: 60 },
      { kind: "ignore" },
    ]);
    // The hour is rolling: the first comment's commands come back an hour after it.
    now = 3_600_000;
    expect(guard.admit("acme/config", "eve", 5)).toEqual({ kind: "run", commands: 5 });
    expect(guard.admit("acme/config", "eve", 5)).toEqual({ kind: "warn", minutes: 1 });
    expect(guard.admit("acme/config", "mona", 5)).toEqual({ kind: "run", commands: 5 });
  });

  it("refills one comment per interval", () => {
    let now = 0;
    const guard = new CommandFloodGuard({ burst: 1, refillMs: 1_000, muteMs: 1, now: () => now });
    expect(guard.admit("r", "eve", 1).kind).toBe("run");
    now = 1_000;
    expect(guard.admit("r", "eve", 1).kind).toBe("run");
  });

  it("forgets the least recently seen person past its bound", () => {
    const guard = new CommandFloodGuard({ burst: 1, maxEntries: 2, now: () => 0 });
    guard.admit("r", "a", 1);
    guard.admit("r", "b", 1);
    guard.admit("r", "c", 1);
    // "a" was forgotten: a full bucket again.
    expect(guard.admit("r", "a", 1).kind).toBe("run");
    expect(guard.admit("r", "c", 1).kind).toBe("warn");
  });
});
