import { UserError } from "./errors.js";

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** Go-style durations as Flux and Argo CD users write them: `30m`, `1h30m`, `45s`, `2d`, `500ms`. */
const DURATION_PATTERN = /^(?:\d+(?:ms|s|m|h|d|w))+$/;

export function isDuration(text: string): boolean {
  return DURATION_PATTERN.test(text);
}

/** Parses a duration into milliseconds; throws a UserError naming the bad text. */
export function parseDuration(text: string): number {
  if (!isDuration(text)) {
    throw new UserError(
      "invalid-duration",
      `invalid duration ${JSON.stringify(text)}: use e.g. 30s, 5m, 1h30m, 2d`,
    );
  }
  let total = 0;
  for (const match of text.matchAll(/(\d+)(ms|s|m|h|d|w)/g)) {
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
  }
  return total;
}

/**
 * A duration that drives a timer, bounded before any timer starts: at least `minMs` (a setting of
 * `0s` or `1ms` would poll in a loop) and at most `maxMs` (within Node's timer range of ~24.8 days;
 * a longer timer fires at once). `name` is the setting the error names.
 */
export function parseDurationWithin(name: string, text: string, minMs: number, maxMs: number): number {
  const ms = parseDuration(text);
  if (ms < minMs || ms > maxMs)
    throw new UserError(
      "invalid-duration",
      `${name} must be between ${formatDuration(minMs)} and ${formatDuration(maxMs)}, got ${JSON.stringify(text)}`,
    );
  return ms;
}

/** Formats milliseconds compactly for humans: `1h30m`, `45s`, `250ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  let rest = Math.round(ms / 1000);
  const parts: string[] = [];
  for (const [unit, seconds] of [
    ["d", 86_400],
    ["h", 3600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    if (rest >= seconds) {
      parts.push(`${Math.floor(rest / seconds)}${unit}`);
      rest %= seconds;
    }
  }
  return parts.join("");
}
