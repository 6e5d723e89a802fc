/**
 * GitHub refuses an issue, pull request or comment body longer than 65,536 characters with 422
 * "body is too long (maximum is 65536 characters)" (https://github.com/renovatebot/renovate/issues/2032).
 * Ferry's bodies grow with the number of environments and images, so each is fitted before it is
 * sent: the visible text is cut at a line, a pointer to the full text is added, and the hidden
 * blocks Ferry parses back are kept whole.
 */
export const GITHUB_BODY_LIMIT = 65_536;

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
