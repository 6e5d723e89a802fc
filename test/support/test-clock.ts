/**
 * A clock (`now`, `sleep`) that moves only when something sleeps on it: a sleep moves it to its
 * wake time at once instead of waiting. Shared by the code under test and the emulator it talks
 * to (e.g. the write budget and the emulator's content limits), a wait of a minute for GitHub's
 * limits passes at once and the emulator sees that minute pass too; and since real time does not
 * move it, how fast the machine runs changes nothing the test sees. A sleeper wakes at its time or
 * later, never earlier: sleepers that started together move the clock once, to the latest wake
 * time among them, not by their sum.
 */
export interface TestClock {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** How far sleeps have moved the clock so far (ms). */
  readonly advancedMs: number;
}

export function testClock(start = Date.now()): TestClock {
  let at = start;
  return {
    now: () => at,
    async sleep(ms) {
      const wake = at + ms;
      await Promise.resolve();
      at = Math.max(at, wake);
    },
    get advancedMs() {
      return at - start;
    },
  };
}
