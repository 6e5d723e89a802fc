/**
 * The rendered-diff table in Ferry's own PR bodies (docs/diff-check.md "In Ferry's PR bodies"):
 * one marked section after everything else, replaced whenever the `ferry/diff` check runs again,
 * left out when the body would pass GitHub's 65,536-character limit. Pure.
 */
import { GITHUB_BODY_LIMIT } from "./github-limits.js";

const START = "<!-- ferry:diff -->";
const END = "<!-- /ferry:diff -->";

/** `body` without its diff section. */
export function withoutDiffSection(body: string): string {
  const start = body.indexOf(START);
  if (start < 0) return body;
  const end = body.indexOf(END, start);
  const rest = end < 0 ? "" : body.slice(end + END.length);
  return (body.slice(0, start).trimEnd() + rest).trimEnd();
}

/** `body` with `table` as its diff section; without one when it would not fit. */
export function withDiffSection(body: string, table: string, limit = GITHUB_BODY_LIMIT): string {
  const base = withoutDiffSection(body);
  if (table.trim() === "") return base;
  const section = `\n\n${START}\n**Rendered diff** (\`ferry/diff\` check):\n\n${table.trim()}\n${END}`;
  return base.length + section.length <= limit ? base + section : base;
}
