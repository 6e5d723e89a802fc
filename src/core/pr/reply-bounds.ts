/**
 * Bounds on what one comment can make Ferry do and say (docs/security.md "Comment commands"): a
 * comment runs at most {@link MAX_COMMANDS_PER_COMMENT} commands, and a reply is cut to
 * {@link MAX_REPLY_CHARS} characters with at most {@link MAX_REPLY_MENTIONS} `@` mentions, so a
 * comment full of commands cannot turn into a wall of text or a notification storm.
 */

/** Commands run from one comment; the rest are answered with one line. */
export const MAX_COMMANDS_PER_COMMENT = 5;
/** Characters of one reply (GitHub allows 65,536). */
export const MAX_REPLY_CHARS = 16_000;
/** `@login` and `@org/team` mentions kept in one reply; later ones lose their `@`. */
export const MAX_REPLY_MENTIONS = 10;

/** The one line that answers the commands of a comment that were not run. */
export function skippedCommandsLine(ran: number, cause: "per-comment" | "hourly"): string {
  return cause === "per-comment"
    ? `Ferry runs at most ${MAX_COMMANDS_PER_COMMENT} commands per comment; the other commands in this comment were not run.`
    : `Ferry ran the first ${ran} commands of this comment; the others were not run: your commands for this hour in this repository are spent.`;
}

const CUT_NOTE = `… (the rest of this reply was cut: at most ${MAX_REPLY_CHARS.toLocaleString("en-US")} characters per reply)`;

/**
 * A GitHub mention: `@` not preceded by a word character, backtick or another `@`, then a login
 * (and optionally `/team`), https://docs.github.com/en/get-started/writing-on-github.
 */
const MENTION = /(?<![\w`@])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\/[A-Za-z0-9_.-]+)?)/g;

/** `text` within the reply bounds: mentions past the cap lose their `@`, and it is cut at a line boundary with a note. */
export function boundReply(text: string, limits: { maxChars?: number; maxMentions?: number } = {}): string {
  const maxChars = limits.maxChars ?? MAX_REPLY_CHARS;
  const maxMentions = limits.maxMentions ?? MAX_REPLY_MENTIONS;
  let mentions = 0;
  const quiet = text.replace(MENTION, (whole: string, login: string) =>
    ++mentions <= maxMentions ? whole : login,
  );
  if (quiet.length <= maxChars) return quiet;
  const room = Math.max(0, maxChars - CUT_NOTE.length - 8);
  const head = quiet.slice(0, room);
  const lineEnd = head.lastIndexOf("\n");
  let kept = lineEnd > 0 ? head.slice(0, lineEnd) : head;
  // A cut inside a fenced block would swallow the note: close the fence first.
  const fences = kept.match(/^ {0,3}(`{3,}|~{3,})/gm) ?? [];
  if (fences.length % 2 === 1) kept += `\n${fences.at(-1)!.trim()}`;
  return `${kept}\n\n${CUT_NOTE}`;
}
