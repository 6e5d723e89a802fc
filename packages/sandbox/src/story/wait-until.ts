/**
 * The story observes every effect instead of assuming it: each wait polls a probe until it
 * returns a value, bounded by a deadline, and a timeout says what was last seen.
 */

export class StoryTimeout extends Error {
  constructor(
    readonly waitingFor: string,
    readonly lastSeen: string | undefined,
    readonly timeoutMs: number,
  ) {
    super(
      `timed out after ${timeoutMs} ms waiting for ${waitingFor}${lastSeen ? ` (last seen: ${lastSeen})` : ""}`,
    );
  }
}

/** What a probe returns: the value once the effect is there, or what it saw instead. */
export type Probe<T> = () => Promise<{ done: true; value: T } | { done: false; seen?: string }>;

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Ends the wait early (Ctrl-C during the story). */
  signal?: AbortSignal;
}

export class StoryInterrupted extends Error {
  constructor(readonly waitingFor: string) {
    super(`interrupted while waiting for ${waitingFor}`);
  }
}

/**
 * How long one effect may take. A quiet machine shows each within a second or two; under a load
 * of 15-19 on two cores Ferry's acceptance of a /rollback took longer than the 15 s this once was
 * (docs/testing.md "Runs under load since"), so the deadline is for a machine ten times slower.
 */
export const DEFAULT_WAIT_MS = 120_000;

export async function waitUntil<T>(
  waitingFor: string,
  probe: Probe<T>,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = performance.now() + timeoutMs;
  let lastSeen: string | undefined;
  for (;;) {
    if (options.signal?.aborted) throw new StoryInterrupted(waitingFor);
    try {
      const result = await probe();
      if (result.done) return result.value;
      lastSeen = result.seen ?? lastSeen;
    } catch (error) {
      // A probe that throws (an API briefly unavailable) is an observation, not the end of the wait.
      lastSeen = (error as Error).message;
    }
    if (performance.now() >= deadline) throw new StoryTimeout(waitingFor, lastSeen, timeoutMs);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export const done = <T>(value: T): { done: true; value: T } => ({ done: true, value });
export const notYet = (seen?: string): { done: false; seen?: string } =>
  seen === undefined ? { done: false } : { done: false, seen };
