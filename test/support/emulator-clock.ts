/**
 * A clock (`now`, `sleep`) for code under test that is the GitHub emulator's own: a sleep moves the
 * emulator's clock (`emu.advanceClock`) to its wake time instead of waiting for it, so a wait of a
 * minute for GitHub's limits passes at once, and the emulator's limits see that minute pass too.
 * Real time still runs under it. A sleeper wakes at its time or later, never earlier: sleepers that
 * started together move the clock once, to the latest wake time among them, not by their sum.
 */
import type { GitHubEmulator } from "../../packages/sandbox/src/github/index.js";

export interface EmulatorClock {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** How far sleeps have moved the emulator's clock so far (ms). */
  readonly advancedMs: number;
}

export function emulatorClock(emu: GitHubEmulator): EmulatorClock {
  let advancedMs = 0;
  return {
    now: () => emu.nowMs(),
    async sleep(ms) {
      const wake = emu.nowMs() + ms;
      await Promise.resolve();
      const behind = wake - emu.nowMs();
      if (behind > 0) {
        emu.advanceClock(behind);
        advancedMs += behind;
      }
    },
    get advancedMs() {
      return advancedMs;
    },
  };
}
