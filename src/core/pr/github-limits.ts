/**
 * GitHub's limits on the text of one request, and how Ferry fits its text to them. Ferry's text
 * grows with the number of environments, images and problems, so each piece is fitted before it is
 * sent rather than refused by GitHub (and retried forever by every scan):
 * - an issue, pull request or comment body: 65,536 characters, else 422 "body is too long (maximum
 *   is 65536 characters)" (https://github.com/renovatebot/renovate/issues/2032). The visible text is
 *   cut at a line, a pointer to the full text is added, and the hidden blocks Ferry parses back are
 *   kept whole;
 * - an issue or pull request title: 256 characters, else 422 "title is too long (maximum is 256
 *   characters)" (https://github.com/googleapis/repo-automation-bots/issues/1895);
 * - a check run's `output.summary` and `output.text`: 65,535 (https://docs.github.com/en/rest/checks/runs#create-a-check-run),
 *   counted in bytes of UTF-8 (https://github.com/github/docs/issues/35252);
 * - annotations: 50 a request; more are added by updating the run (same page).
 */
export const GITHUB_BODY_LIMIT = 65_536;
export const GITHUB_TITLE_LIMIT = 256;
export const GITHUB_CHECK_OUTPUT_LIMIT = 65_535;
export const GITHUB_ANNOTATIONS_PER_REQUEST = 50;

/**
 * `visible`, then `hidden`, joined by a blank line; when that is too long, `visible` is cut at the
 * last whole line that leaves room for a note naming `fullText` (where the rest can be read) and
 * for `hidden`. Undefined when `hidden` alone leaves no room: the caller decides what to drop.
 */
export function fitBody(
  visible: string,
  hidden: string,
  fullText: string,
  limit = GITHUB_BODY_LIMIT,
): string | undefined {
  const join = (text: string): string => (hidden === "" ? text : `${text}\n\n${hidden}`);
  const whole = join(visible);
  if (whole.length <= limit) return whole;
  const note = `\n\n_This text was cut to GitHub's limit of ${limit.toLocaleString("en-US")} characters. ${fullText}_`;
  const room = limit - join("").length - note.length;
  if (room < 0) return undefined;
  const cut = visible.slice(0, room);
  const lastLine = cut.lastIndexOf("\n");
  return join(`${lastLine > 0 ? cut.slice(0, lastLine) : cut}${note}`);
}

/** `title` when it fits; else cut, with an ellipsis, to the limit. */
export function fitTitle(title: string, limit = GITHUB_TITLE_LIMIT): string {
  if (title.length <= limit) return title;
  return `${title.slice(0, limit - 1).trimEnd()}…`;
}

/**
 * A check run's summary or text within `limit` bytes of UTF-8: cut at the last whole line that
 * leaves room for a last line saying how many lines are not shown.
 */
export function fitCheckOutput(text: string, limit = GITHUB_CHECK_OUTPUT_LIMIT): string {
  const bytes = (value: string) => new TextEncoder().encode(value).length;
  if (bytes(text) <= limit) return text;
  const lines = text.split("\n");
  const note = (left: number) => `\n\n… ${left} more line${left === 1 ? "" : "s"} not shown`;
  let kept = 0;
  let size = 0;
  // The note's size with the most digits it can need: the count never grows as lines are kept.
  const room = limit - bytes(note(lines.length));
  while (kept < lines.length && size + bytes(lines[kept]!) + (kept > 0 ? 1 : 0) <= room) {
    size += bytes(lines[kept]!) + (kept > 0 ? 1 : 0);
    kept++;
  }
  if (kept === 0) {
    // One line longer than the limit: its start, cut at a character.
    let head = "";
    for (const character of lines[0]!) {
      if (bytes(head + character) > room) break;
      head += character;
    }
    return `${head}${note(lines.length)}`;
  }
  return `${lines.slice(0, kept).join("\n")}${note(lines.length - kept)}`;
}

/** `items` in requests of at most `size` (GitHub's 50 annotations a request); none gives none. */
export function inBatches<T>(items: readonly T[], size = GITHUB_ANNOTATIONS_PER_REQUEST): T[][] {
  const batches: T[][] = [];
  for (let at = 0; at < items.length; at += size) batches.push(items.slice(at, at + size));
  return batches;
}
