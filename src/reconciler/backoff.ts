/**
 * Timing of the reconcile loop, pure: randomness comes in as a parameter. Jitter spreads many
 * reconcilers' polls apart (Argo CD adds up to 60 s to its 120 s); capped exponential backoff
 * keeps a crash-looping apply from hammering the API server (docs/reliability.md row 28).
 */

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 5_000, maxMs: 5 * 60_000 };

/** Delay before the next attempt after `failures` consecutive failures (≥ 1): "equal jitter" in [d/2, d]. */
export function backoffDelay(failures: number, policy: BackoffPolicy, random: number): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 30);
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}

/** The regular interval plus up to `fraction` of it, so replicas started together drift apart. */
export function jitteredInterval(intervalMs: number, random: number, fraction = 0.25): number {
  return Math.round(intervalMs + intervalMs * fraction * random);
}
