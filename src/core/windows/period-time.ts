import { instantOf, isTimeZone } from "./zoned-time.js";

/**
 * The moments of a freeze period (docs/config.md "Change windows and freezes"): an ISO 8601 date
 * (`2026-12-20`: its midnight), a local date and time (`2026-12-20T18:00`) in the period's time
 * zone, or an instant with its offset (`2026-12-20T18:00:00+01:00`, `…Z`).
 */
const MOMENT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:\d{2})?)?$/;

/** The instant a moment names, or undefined when it is not one. */
export function parseMoment(text: string, timeZone: string): Date | undefined {
  const match = MOMENT.exec(text);
  if (!match || !isTimeZone(timeZone)) return undefined;
  const [, y, mo, d, h = "00", mi = "00", s = "00", zone] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (
    calendar.getUTCFullYear() !== year ||
    calendar.getUTCMonth() !== month - 1 ||
    calendar.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return undefined;
  if (zone === undefined) {
    const local = instantOf({ year, month, day }, hour, minute, timeZone);
    return new Date(local.getTime() + second * 1000);
  }
  const offset =
    zone === "Z"
      ? 0
      : (zone[0] === "-" ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  if (Math.abs(offset) > 18 * 60) return undefined;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second) - offset * 60_000);
}
