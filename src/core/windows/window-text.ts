import type { WindowVerdict } from "./evaluate-windows.js";

/**
 * The words Ferry says about a change window or freeze (docs/config.md "Change windows and
 * freezes"): one line for replies and logs, and the `ferry/window` commit status description,
 * which GitHub caps at 140 characters.
 */

export const WINDOW_STATUS_CONTEXT = "ferry/window";
export const STATUS_DESCRIPTION_CHARS = 140;

/** `2027-01-04 00:00 UTC`. */
export function formatInstant(instant: Date): string {
  return `${instant.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** Why a closed environment is closed, as one line: `prod is frozen until …: end-of-year`. */
export function closedLine(environment: string, verdict: WindowVerdict): string {
  const closure = verdict.closure;
  if (!closure) return `${environment} is open for changes`;
  if (closure.kind === "freeze")
    return `${environment} is frozen until ${formatInstant(closure.to)}: ${closure.reason}`;
  const opens = verdict.changesAt ? `; it opens ${formatInstant(verdict.changesAt)}` : "";
  return `${environment} is outside its change windows (${closure.windows.join("; ")})${opens}`;
}

/** The `ferry/window` description for one environment (or several, joined). */
export function statusDescription(lines: string[]): string {
  const text = lines.join(" · ");
  return text.length <= STATUS_DESCRIPTION_CHARS ? text : `${text.slice(0, STATUS_DESCRIPTION_CHARS - 1)}…`;
}

/** The description of a head that a recorded override let through. */
export function overrideLine(environment: string, override: { by: string; reason: string }): string {
  return `${environment} closed; override by @${override.by}: ${override.reason}`;
}
