import * as z from "zod";
import { parseMoment } from "../windows/period-time.js";
import { isTimeZone } from "../windows/zoned-time.js";

/**
 * `windows:`, `freeze:` and `overrideFreeze:` of an environment (docs/config.md "Change windows and
 * freezes"): when Ferry may change it, the periods it may not, and who may override either.
 */

export const WEEKDAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"] as const;
export type WeekdayName = (typeof WEEKDAY_NAMES)[number];

/** Windows and freeze periods per environment at most (each is evaluated on every decision). */
export const MAX_WINDOWS = 20;
export const MAX_FREEZES = 50;

const CLOCK = /^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/;
/** Printable text on one line (it goes into a commit status description and replies). */
const TEXT = /^[^\p{Cc}]{1,140}$/u;
const TEAM_SLUG = /^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/;
const LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;

const timeZone = z
  .string()
  .refine(isTimeZone, { message: "unknown time zone: use an IANA name such as Europe/Berlin, or UTC" })
  .default("UTC")
  .describe("IANA time zone of the times (default UTC); daylight saving time follows the zone.");

const windowSchema = z
  .strictObject({
    name: z.string().regex(TEXT, "name is printable text of at most 140 characters").optional(),
    days: z
      .array(z.enum(WEEKDAY_NAMES))
      .min(1)
      .max(7)
      .optional()
      .describe("Weekdays the window starts on (default every day)."),
    start: z.string().regex(CLOCK, "start is HH:MM (00:00–23:59)").describe("Local time the window opens."),
    end: z
      .string()
      .regex(CLOCK, "end is HH:MM (00:00–24:00)")
      .describe("Local time it closes; earlier than start: the next day (overnight)."),
    timeZone,
  })
  .superRefine((window, ctx) => {
    if (window.start === "24:00")
      ctx.addIssue({ code: "custom", path: ["start"], message: "start is HH:MM (00:00–23:59)" });
    else if (window.start === window.end)
      ctx.addIssue({
        code: "custom",
        path: ["end"],
        message: "end equals start: a whole day is 00:00–24:00",
      });
  });

const freezeSchema = z
  .strictObject({
    from: z.string().describe("First moment of the freeze: 2026-12-20, 2026-12-20T18:00, or with an offset."),
    to: z.string().describe("First moment after it (exclusive), in the same forms."),
    reason: z.string().regex(TEXT, "reason is printable text of at most 140 characters"),
    timeZone,
  })
  .superRefine((period, ctx) => {
    const from = parseMoment(period.from, period.timeZone);
    const to = parseMoment(period.to, period.timeZone);
    if (!from) ctx.addIssue({ code: "custom", path: ["from"], message: "from is a date or date-time" });
    if (!to) ctx.addIssue({ code: "custom", path: ["to"], message: "to is a date or date-time" });
    if (from && to && to.getTime() <= from.getTime())
      ctx.addIssue({ code: "custom", path: ["to"], message: "to must be after from" });
  });

/** The environment fields this file adds to `environments.<name>`. */
export const windowFields = {
  windows: z
    .array(windowSchema)
    .min(1)
    .max(MAX_WINDOWS, `at most ${MAX_WINDOWS} windows`)
    .optional()
    .describe("When Ferry may change this environment; outside every window it is closed."),
  freeze: z
    .array(freezeSchema)
    .max(MAX_FREEZES, `at most ${MAX_FREEZES} freeze periods`)
    .optional()
    .describe("Periods in which the environment is closed, whatever the windows say."),
  overrideFreeze: z
    .strictObject({
      users: z.array(z.string().regex(LOGIN, "a user is a GitHub login")).max(100).default([]),
      teams: z
        .array(z.string().regex(TEAM_SLUG, "team must be org/team-slug"))
        .max(20)
        .default([])
        .describe("Teams whose members may override."),
      permission: z
        .enum(["read", "triage", "write", "maintain", "admin"])
        .optional()
        .describe("Anyone with at least this repository permission may override too (default: nobody)."),
    })
    .optional()
    .describe("Who may run /promote or /rollback with --override-freeze while the environment is closed."),
};

export type WindowConfig = z.infer<typeof windowSchema>;
export type FreezeConfig = z.infer<typeof freezeSchema>;
export type OverrideRole = NonNullable<z.infer<(typeof windowFields)["overrideFreeze"]>>;
export interface WindowedEnvironment {
  windows?: WindowConfig[] | undefined;
  freeze?: FreezeConfig[] | undefined;
  overrideFreeze?: OverrideRole | undefined;
}
