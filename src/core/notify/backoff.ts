/**
 * When a notification is tried again (docs/config.md "Notifications"): exponential backoff from
 * `firstDelayMs`, doubling up to `maxDelayMs`, at most `maxAttempts` attempts and never past
 * `maxTotalMs` after the first. Pure: the outbox sleeps on the injected clock.
 */
export interface RetrySchedule {
  maxAttempts: number;
  firstDelayMs: number;
  maxDelayMs: number;
  maxTotalMs: number;
}

export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = {
  maxAttempts: 6,
  firstDelayMs: 2_000,
  maxDelayMs: 60_000,
  maxTotalMs: 10 * 60_000,
};

/**
 * The pause before attempt `attempt + 1`, after `attempt` attempts (1-based) begun `elapsedMs`
 * ago; undefined when no attempt is left (the count, or the total time, is spent).
 */
export function retryDelay(schedule: RetrySchedule, attempt: number, elapsedMs: number): number | undefined {
  if (attempt >= schedule.maxAttempts) return undefined;
  const delay = Math.min(schedule.maxDelayMs, schedule.firstDelayMs * 2 ** (attempt - 1));
  return elapsedMs + delay > schedule.maxTotalMs ? undefined : delay;
}

/** Whether an HTTP answer is worth another attempt: 408, 429 and 5xx; other 4xx never change. */
export function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}
