/**
 * Wall-clock time in an IANA time zone, from the platform's time-zone database (`Intl`), with no
 * dependency: the local date and time of an instant, and the instant of a local date and time
 * (docs/config.md "Change windows and freezes": a local time skipped by a DST change moves forward
 * by the gap; one that happens twice is its first occurrence).
 */

export interface LocalDate {
  year: number;
  /** 1–12. */
  month: number;
  day: number;
}

export interface LocalDateTime extends LocalDate {
  hour: number;
  minute: number;
  /** 0 (Sunday) – 6 (Saturday). */
  weekday: number;
}

const WEEKDAYS: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };
/** Formatters by zone: building one is costly, and a config names a handful of zones. */
const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 256;

function formatter(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      weekday: "short",
    });
    if (formatters.size >= MAX_FORMATTERS) formatters.clear();
    formatters.set(timeZone, format);
  }
  return format;
}

/** Whether the platform knows `timeZone` (an IANA name such as `Europe/Berlin`, or `UTC`). */
export function isTimeZone(timeZone: string): boolean {
  if (timeZone.length === 0 || timeZone.length > 64) return false;
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

function parts(ms: number, timeZone: string): LocalDateTime & { second: number } {
  const values: Record<string, string> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(ms))) values[part.type] = part.value;
  return {
    year: Number(values.year),
    month: Number(values.month),
    day: Number(values.day),
    hour: Number(values.hour) % 24,
    minute: Number(values.minute),
    second: Number(values.second),
    weekday: WEEKDAYS[values.weekday ?? ""] ?? 0,
  };
}

/** The local date, time and weekday of an instant in `timeZone`. */
export function localAt(instant: Date, timeZone: string): LocalDateTime {
  const { second: _second, ...local } = parts(instant.getTime(), timeZone);
  return local;
}

/** The zone's offset from UTC at an instant, in ms (whole seconds: instants carry milliseconds). */
function offsetAt(ms: number, timeZone: string): number {
  const whole = Math.floor(ms / 1000) * 1000;
  const p = parts(whole, timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - whole;
}

const DAY_MS = 86_400_000;

/**
 * The instant of a local date and time in `timeZone`. A time that does not exist (the hour a
 * spring-forward skips) is moved forward by the gap; one that exists twice (the hour a fall-back
 * repeats) is the earlier.
 */
export function instantOf(date: LocalDate, hour: number, minute: number, timeZone: string): Date {
  const local = Date.UTC(date.year, date.month - 1, date.day, hour, minute);
  const before = offsetAt(local - DAY_MS, timeZone);
  const after = offsetAt(local + DAY_MS, timeZone);
  const candidates = [local - before, local - after].filter(
    (candidate) => candidate + offsetAt(candidate, timeZone) === local,
  );
  if (candidates.length > 0) return new Date(Math.min(...candidates));
  // In a gap: the offset before it, read forward, lands as far past the gap's start as asked.
  return new Date(local - before);
}

/** The calendar date `days` after `date` (negative: before). */
export function addDays(date: LocalDate, days: number): LocalDate {
  const shifted = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: shifted.getUTCFullYear(), month: shifted.getUTCMonth() + 1, day: shifted.getUTCDate() };
}

/** The weekday of a calendar date, 0 (Sunday) – 6. */
export function weekdayOf(date: LocalDate): number {
  return new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
}
