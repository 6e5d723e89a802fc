import * as z from "zod";

/**
 * `notify:` of an environment (docs/config.md "Notifications"): which of the operator's
 * notification targets hear which of this environment's events. The config names a target only;
 * its URL, key and kind come from Ferry's environment (`FERRY_NOTIFY_<NAME>_URL`, `_SECRET`,
 * `_KIND`, `_OWNERS`), never from the repository.
 */

export const NOTIFY_EVENTS = [
  "opened",
  "merged",
  "promoted",
  "rolled-back",
  "held",
  "blocked",
  "sync-failed",
  "degraded",
] as const;
export type NotifyEventKind = (typeof NOTIFY_EVENTS)[number];

/** Targets one environment may name. */
export const MAX_NOTIFY_TARGETS = 10;

/** A target name: lower case, its variables are `FERRY_NOTIFY_<NAME upper-cased>_…`. */
export const NOTIFY_TARGET_NAME = /^[a-z][a-z0-9_]{0,39}$/;

export const notifySchema = z
  .array(
    z.strictObject({
      target: z
        .string()
        .regex(
          NOTIFY_TARGET_NAME,
          "a notify target is a name of lower-case letters, digits and _ (its URL is FERRY_NOTIFY_<NAME>_URL in Ferry's environment)",
        )
        .describe("The operator's target: FERRY_NOTIFY_<NAME>_URL (and _SECRET, _KIND, _OWNERS)."),
      events: z
        .array(z.enum(NOTIFY_EVENTS))
        .min(1)
        .max(NOTIFY_EVENTS.length)
        .optional()
        .describe("The events this target hears; default every one."),
    }),
  )
  .max(MAX_NOTIFY_TARGETS, `at most ${MAX_NOTIFY_TARGETS} notify targets per environment`)
  .describe("Where this environment's releases are announced outside GitHub (docs/config.md Notifications).");

export type NotifyRule = z.infer<typeof notifySchema>[number];

/** The targets of `rules` that hear `kind`, each once, in config order. */
export function targetsFor(rules: readonly NotifyRule[] | undefined, kind: NotifyEventKind): string[] {
  const names = (rules ?? [])
    .filter((rule) => !rule.events || rule.events.includes(kind))
    .map((r) => r.target);
  return [...new Set(names)];
}
