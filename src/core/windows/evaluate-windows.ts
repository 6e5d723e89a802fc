import { WEEKDAY_NAMES, type WindowConfig, type WindowedEnvironment } from "../config/window-schema.js";
import { parseMoment } from "./period-time.js";
import { addDays, instantOf, localAt, weekdayOf, type LocalDate } from "./zoned-time.js";

/**
 * Whether an environment is open for changes at an instant, why not, and when that next changes
 * (docs/config.md "Change windows and freezes"). Pure: the instant is handed in. An environment
 * with neither `windows` nor `freeze` is always open; with windows, only inside one of them; a
 * freeze period closes it whatever the windows say.
 */

export type Closure =
  { kind: "freeze"; reason: string; from: Date; to: Date } | { kind: "outside-windows"; windows: string[] };

export interface WindowVerdict {
  open: boolean;
  /** Why it is closed. */
  closure?: Closure;
  /** When `key` next changes (open ↔ closed, or one freeze to another); undefined: not foreseen. */
  changesAt?: Date;
  /** The state in one stable word: `open`, `freeze:<n>:<reason>` or `outside-windows`. */
  key: string;
}

/** Boundaries followed at most when looking for the next change (each is a state that stays the same). */
const MAX_STEPS = 400;
/** Days ahead a window boundary is looked for: every weekday, and the overnight end of the last. */
const WINDOW_DAYS_AHEAD = 8;

export function hasWindowRules(environment: WindowedEnvironment | undefined): boolean {
  return (environment?.windows?.length ?? 0) > 0 || (environment?.freeze?.length ?? 0) > 0;
}

interface Period {
  index: number;
  reason: string;
  from: Date;
  to: Date;
}

function periodsOf(environment: WindowedEnvironment): Period[] {
  return (environment.freeze ?? []).flatMap((period, index) => {
    const from = parseMoment(period.from, period.timeZone ?? "UTC");
    const to = parseMoment(period.to, period.timeZone ?? "UTC");
    return from && to && from < to ? [{ index, reason: period.reason, from, to }] : [];
  });
}

/** The local clock time `HH:MM` as minutes; 24:00 is 1440. */
function minutes(clock: string): number {
  return Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));
}

/** The instants window `window` opens and closes when it starts on local date `date`, if it does. */
function occurrence(window: WindowConfig, date: LocalDate): { start: Date; end: Date } | undefined {
  const zone = window.timeZone ?? "UTC";
  const weekday = WEEKDAY_NAMES[weekdayOf(date)]!;
  if (window.days !== undefined && !window.days.includes(weekday)) return undefined;
  const start = minutes(window.start);
  const end = minutes(window.end);
  const endDay = end <= start || end === 1440 ? addDays(date, 1) : date;
  const endMinutes = end === 1440 ? 0 : end;
  return {
    start: instantOf(date, Math.floor(start / 60), start % 60, zone),
    end: instantOf(endDay, Math.floor(endMinutes / 60), endMinutes % 60, zone),
  };
}

type Span = { start: Date; end: Date } | undefined;
/** Occurrences already computed in one evaluation, by window and local start date. */
type SpanCache = Map<string, Span>;

function occurrencesAround(
  windows: readonly WindowConfig[],
  index: number,
  at: Date,
  daysAhead: number,
  cache: SpanCache,
) {
  const window = windows[index]!;
  const today = localAt(at, window.timeZone ?? "UTC");
  const found: { start: Date; end: Date }[] = [];
  for (let offset = -1; offset <= daysAhead; offset++) {
    const date = addDays(today, offset);
    const key = `${index}:${date.year}-${date.month}-${date.day}`;
    if (!cache.has(key)) cache.set(key, occurrence(window, date));
    const span = cache.get(key);
    if (span) found.push(span);
  }
  return found;
}

function windowName(window: WindowConfig): string {
  return (
    window.name ??
    `${window.days ? window.days.join(",") : "daily"} ${window.start}–${window.end} ${window.timeZone ?? "UTC"}`
  );
}

function stateAt(
  environment: WindowedEnvironment,
  periods: Period[],
  at: Date,
  cache: SpanCache,
): WindowVerdict {
  const t = at.getTime();
  const freeze = periods.find((period) => period.from.getTime() <= t && t < period.to.getTime());
  if (freeze)
    return {
      open: false,
      closure: { kind: "freeze", reason: freeze.reason, from: freeze.from, to: freeze.to },
      key: `freeze:${freeze.index}:${freeze.reason}`,
    };
  const windows = environment.windows ?? [];
  if (windows.length === 0) return { open: true, key: "open" };
  const inside = windows.some((_, index) =>
    occurrencesAround(windows, index, at, 0, cache).some(
      (span) => span.start.getTime() <= t && t < span.end.getTime(),
    ),
  );
  return inside
    ? { open: true, key: "open" }
    : {
        open: false,
        closure: { kind: "outside-windows", windows: windows.map(windowName) },
        key: "outside-windows",
      };
}

/** The first window or freeze boundary strictly after `at` (during a freeze, only freeze boundaries). */
function nextBoundary(
  environment: WindowedEnvironment,
  periods: Period[],
  at: Date,
  frozen: boolean,
  cache: SpanCache,
): Date | undefined {
  const t = at.getTime();
  let best: number | undefined;
  const consider = (candidate: number) => {
    if (candidate > t && (best === undefined || candidate < best)) best = candidate;
  };
  for (const period of periods) {
    consider(period.from.getTime());
    consider(period.to.getTime());
  }
  const windows = environment.windows ?? [];
  if (!frozen)
    for (let index = 0; index < windows.length; index++)
      for (const span of occurrencesAround(windows, index, at, WINDOW_DAYS_AHEAD, cache)) {
        consider(span.start.getTime());
        consider(span.end.getTime());
      }
  return best === undefined ? undefined : new Date(best);
}

export function evaluateWindows(environment: WindowedEnvironment | undefined, now: Date): WindowVerdict {
  if (!environment || !hasWindowRules(environment)) return { open: true, key: "open" };
  const periods = periodsOf(environment);
  const cache: SpanCache = new Map();
  const verdict = stateAt(environment, periods, now, cache);
  let cursor = now;
  for (let step = 0; step < MAX_STEPS; step++) {
    const next = nextBoundary(environment, periods, cursor, verdict.closure?.kind === "freeze", cache);
    if (next === undefined) break;
    if (stateAt(environment, periods, next, cache).key !== verdict.key)
      return { ...verdict, changesAt: next };
    cursor = next;
  }
  return verdict;
}
