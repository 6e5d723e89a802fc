/**
 * The change-window evaluator (docs/config.md "Change windows and freezes"): open or closed at an
 * instant, why, and when that next changes, across daylight-saving changes and overnight windows.
 */
import { describe, expect, it } from "vitest";
import type { WindowedEnvironment } from "../../../src/core/config/window-schema.js";
import { evaluateWindows } from "../../../src/core/windows/evaluate-windows.js";
import { instantOf, localAt } from "../../../src/core/windows/zoned-time.js";
import { closedLine } from "../../../src/core/windows/window-text.js";

const weekdays = ["mon", "tue", "wed", "thu", "fri"] as const;
const berlinOffice: WindowedEnvironment = {
  windows: [{ days: [...weekdays], start: "09:00", end: "17:00", timeZone: "Europe/Berlin" }],
};
const fridayNight: WindowedEnvironment = {
  windows: [{ days: ["fri"], start: "22:00", end: "02:00", timeZone: "UTC" }],
};
const endOfYear: WindowedEnvironment = {
  ...berlinOffice,
  freeze: [{ from: "2026-12-20", to: "2027-01-04", reason: "end-of-year", timeZone: "Europe/Berlin" }],
};

interface Row {
  name: string;
  environment: WindowedEnvironment | undefined;
  at: string;
  open: boolean;
  kind?: "freeze" | "outside-windows";
  changesAt?: string;
}

const rows: Row[] = [
  {
    name: "no windows and no freeze: always open",
    environment: undefined,
    at: "2026-06-01T12:00:00Z",
    open: true,
  },
  {
    name: "inside office hours (CEST): closes at 17:00 Berlin",
    environment: berlinOffice,
    at: "2026-03-30T08:00:00Z",
    open: true,
    changesAt: "2026-03-30T15:00:00.000Z",
  },
  {
    name: "Friday evening before the spring-forward weekend: opens Monday 09:00 CEST (07:00Z, not 08:00Z)",
    environment: berlinOffice,
    at: "2026-03-27T16:30:00Z",
    open: false,
    kind: "outside-windows",
    changesAt: "2026-03-30T07:00:00.000Z",
  },
  {
    name: "Friday evening before the fall-back weekend: opens Monday 09:00 CET (08:00Z)",
    environment: berlinOffice,
    at: "2026-10-23T16:30:00Z",
    open: false,
    kind: "outside-windows",
    changesAt: "2026-10-26T08:00:00.000Z",
  },
  {
    name: "an overnight window is open after midnight, on the day after its start day",
    environment: fridayNight,
    at: "2026-06-06T01:00:00Z",
    open: true,
    changesAt: "2026-06-06T02:00:00.000Z",
  },
  {
    name: "an overnight window is closed before it starts",
    environment: fridayNight,
    at: "2026-06-05T21:59:00Z",
    open: false,
    kind: "outside-windows",
    changesAt: "2026-06-05T22:00:00.000Z",
  },
  {
    name: "an overnight window does not open after midnight of a day it does not start the night before",
    environment: fridayNight,
    at: "2026-06-07T01:00:00Z",
    open: false,
    kind: "outside-windows",
    changesAt: "2026-06-12T22:00:00.000Z",
  },
  {
    name: "a start in the skipped hour (02:30 on 29 March in Berlin) opens at 03:30 CEST",
    environment: { windows: [{ start: "02:30", end: "04:00", timeZone: "Europe/Berlin" }] },
    at: "2026-03-29T01:00:00Z",
    open: false,
    kind: "outside-windows",
    changesAt: "2026-03-29T01:30:00.000Z",
  },
  {
    name: "an end in the repeated hour (01:30 on 1 November in New York) is its first occurrence",
    environment: { windows: [{ start: "00:00", end: "01:30", timeZone: "America/New_York" }] },
    at: "2026-11-01T04:30:00Z",
    open: true,
    changesAt: "2026-11-01T05:30:00.000Z",
  },
  {
    name: "the freeze closes the environment inside office hours, until its end",
    environment: endOfYear,
    at: "2026-12-22T10:00:00Z",
    open: false,
    kind: "freeze",
    // The freeze ends at midnight Berlin on Monday, which is outside the window: that is a change too.
    changesAt: "2027-01-03T23:00:00.000Z",
  },
  {
    name: "before a freeze: open until the window's end, which comes first",
    environment: endOfYear,
    at: "2026-12-18T10:00:00Z",
    open: true,
    changesAt: "2026-12-18T16:00:00.000Z",
  },
  {
    name: "a freeze alone: open until it starts",
    environment: {
      freeze: [
        { from: "2026-12-20T18:00:00+01:00", to: "2026-12-21T00:00:00Z", reason: "x", timeZone: "UTC" },
      ],
    },
    at: "2026-12-01T00:00:00Z",
    open: true,
    changesAt: "2026-12-20T17:00:00.000Z",
  },
  {
    name: "a window all day every day never changes",
    environment: { windows: [{ start: "00:00", end: "24:00", timeZone: "Asia/Kolkata" }] },
    at: "2026-12-01T00:00:00Z",
    open: true,
  },
];

describe("evaluateWindows", () => {
  it.each(rows)("$name", (row) => {
    const verdict = evaluateWindows(row.environment, new Date(row.at));
    expect(verdict.open).toBe(row.open);
    expect(verdict.closure?.kind).toBe(row.kind);
    expect(verdict.changesAt?.toISOString()).toBe(row.changesAt);
  });

  it("says which freeze closes the environment, with its reason", () => {
    const verdict = evaluateWindows(endOfYear, new Date("2026-12-24T12:00:00Z"));
    expect(closedLine("prod", verdict)).toBe("prod is frozen until 2027-01-03 23:00 UTC: end-of-year");
    expect(verdict.key).toBe("freeze:0:end-of-year");
  });

  it("names the windows and when the next opens", () => {
    const verdict = evaluateWindows(berlinOffice, new Date("2026-03-28T12:00:00Z"));
    expect(closedLine("prod", verdict)).toBe(
      "prod is outside its change windows (mon,tue,wed,thu,fri 09:00–17:00 Europe/Berlin); it opens 2026-03-30 07:00 UTC",
    );
  });

  it("the state changes exactly at changesAt and not a minute before", () => {
    for (const row of rows.filter((candidate) => candidate.changesAt !== undefined)) {
      const change = new Date(row.changesAt!);
      const first = evaluateWindows(row.environment, new Date(row.at));
      expect(evaluateWindows(row.environment, new Date(change.getTime() - 60_000)).key).toBe(first.key);
      expect(evaluateWindows(row.environment, change).key).not.toBe(first.key);
    }
  });
});

describe("zoned time", () => {
  it.each([
    ["Europe/Berlin", { year: 2026, month: 3, day: 29 }, 3, 0, "2026-03-29T01:00:00.000Z"],
    ["Europe/Berlin", { year: 2026, month: 3, day: 29 }, 2, 15, "2026-03-29T01:15:00.000Z"],
    ["Europe/Berlin", { year: 2026, month: 10, day: 25 }, 2, 30, "2026-10-25T00:30:00.000Z"],
    ["Australia/Lord_Howe", { year: 2026, month: 10, day: 4 }, 2, 15, "2026-10-03T15:45:00.000Z"],
    ["UTC", { year: 2028, month: 2, day: 29 }, 23, 59, "2028-02-29T23:59:00.000Z"],
  ])("%s %o %d:%d is %s", (zone, date, hour, minute, expected) => {
    const instant = instantOf(date, hour, minute, zone);
    expect(instant.toISOString()).toBe(expected);
  });

  it("reads back the local time of an instant", () => {
    expect(localAt(new Date("2026-03-29T01:00:00Z"), "Europe/Berlin")).toEqual({
      year: 2026,
      month: 3,
      day: 29,
      hour: 3,
      minute: 0,
      weekday: 0,
    });
  });
});
