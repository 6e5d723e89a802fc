import MarkdownIt from "markdown-it";
import { NAME_SOURCE } from "../config/names.js";
import { parseHistoryDate } from "../history/history.js";
import { isValidTag, TAG_SOURCE } from "../image-ref.js";

/**
 * The comment command grammar (docs/architecture.md "GitHub conventions"): a command is the first word of a
 * line and the whole line must match exactly; anything else on the line makes it not a command.
 *   /promote <env> [image@tag] [--override-freeze "reason"]   /rollback <env> [image@tag] [--override-freeze "reason"]
 *   /hold <env>   /unhold <env>
 *   /unfloor <env> [image]       /ferry status
 *   /ferry history <env> [image] [--since DATE | --at DATE]
 *   /ferry why <env> <image>[@tag]
 */
export type Command =
  | {
      name: "promote" | "rollback";
      environment: string;
      image?: { name: string; tag: string };
      /** The reason of a change-window override (docs/config.md "Change windows and freezes"). */
      overrideFreeze?: string;
    }
  | { name: "hold" | "unhold"; environment: string }
  /** Lowers the floor of one image (or of every image) of an environment: only a command does. */
  | { name: "unfloor"; environment: string; imageName?: string }
  | { name: "status" }
  | { name: "history"; environment: string; imageName?: string; since?: string; at?: string }
  /** The reason chain for one tag (or the policy's newest) of one image in one environment. */
  | { name: "why"; environment: string; imageName: string; tag?: string };

const NAME = NAME_SOURCE;
const TAG = TAG_SOURCE;
const WITH_IMAGE = new RegExp(
  `^/(promote|rollback)[ \\t]+(${NAME})(?:[ \\t]+(${NAME})@(${TAG}))?(?:[ \\t]+--override-freeze[ \\t]+"([^"\\u0000-\\u001f\\u007f]{1,140})")?[ \\t]*$`,
);
const ENVIRONMENT_ONLY = new RegExp(`^/(hold|unhold)[ \\t]+(${NAME})[ \\t]*$`);
const UNFLOOR = new RegExp(`^/unfloor[ \\t]+(${NAME})(?:[ \\t]+(${NAME}))?[ \\t]*$`);
const STATUS = /^\/ferry[ \t]+status[ \t]*$/;
const HISTORY = new RegExp(
  `^/ferry[ \\t]+history[ \\t]+(${NAME})(?:[ \\t]+(?!--)(${NAME}))?(?:[ \\t]+--(since|at)[ \\t]+([0-9T:.+Z-]{10,29}))?[ \\t]*$`,
);
const WHY = new RegExp(`^/ferry[ \\t]+why[ \\t]+(${NAME})[ \\t]+(${NAME})(?:@(${TAG}))?[ \\t]*$`);
/** Bound the work on huge comments: commands are in the first lines. */
const MAX_LINES = 50;
/** GitHub's own limit on a comment's length; anything past it is not read. */
export const MAX_COMMENT_CHARS = 65_536;

/**
 * CommonMark as GitHub renders it (https://github.github.com/gfm/): raw HTML recognised (so that
 * comments and other tags are not mistaken for text), no link detection or typographic rewriting.
 */
const markdown = new MarkdownIt("commonmark", { html: true, linkify: false, typographer: false });

/**
 * Every command in a comment, in order. The comment is parsed as CommonMark and commands are taken
 * only from the visible text of top-level paragraphs: never from code (fenced with any number of
 * backticks or tildes, or indented), HTML blocks and comments, block quotes (quoted text is someone
 * else's words, including lazy continuation lines), lists, tables or headings, paragraphs inside a
 * `<details>` element (folded away, or an aside; docs/config.md "Comment commands"), and never from
 * a line that also holds inline code, links, images or HTML.
 */
export function parseCommands(body: string): Command[] {
  const commands: Command[] = [];
  for (const line of paragraphLines(body.slice(0, MAX_COMMENT_CHARS))) {
    const trimmed = line.trim();
    if (!trimmed.startsWith("/")) continue;
    const command = parseCommandLine(trimmed);
    if (command) commands.push(command);
    if (commands.length >= MAX_LINES) break;
  }
  return commands;
}

/** Marks a line that held something other than plain text, so that it cannot match a command. */
const NOT_TEXT = "\u0000";

const EMPHASIS = new Set(["em_open", "em_close", "strong_open", "strong_close"]);

/** `<details …>` and `</details>` tags, in raw HTML. */
const DETAILS_TAG = /<(\/?)details(?=[\s>/])/gi;

/** How far raw HTML moves the `<details>` nesting: +1 per opening tag, -1 per closing one. */
function detailsDelta(html: string): number {
  let delta = 0;
  const tags = html.replace(/<!--[\s\S]*?(?:-->|$)/g, "");
  for (const match of tags.matchAll(DETAILS_TAG)) delta += match[1] === "/" ? -1 : 1;
  return delta;
}

/** The visible text lines of the paragraphs at the top level of the document, outside `<details>`. */
function paragraphLines(body: string): string[] {
  const tokens = markdown.parse(body, {});
  const lines: string[] = [];
  let depth = 0;
  // Paragraphs between `<details>` and `</details>` (HTML blocks around Markdown, separated by
  // blank lines, as GitHub renders a collapsed section) are not commands.
  let details = 0;
  for (const [index, token] of tokens.entries()) {
    if (token.nesting === 1) depth++;
    if (token.nesting === -1) depth--;
    if (token.type === "html_block") details = Math.max(0, details + detailsDelta(token.content));
    if (token.type === "inline" && depth === 1)
      for (const child of token.children ?? [])
        if (child.type === "html_inline") details = Math.max(0, details + detailsDelta(child.content));
    // depth 1 inside a paragraph_open at the top level: the paragraph's inline content.
    if (token.type !== "inline" || depth !== 1 || tokens[index - 1]?.type !== "paragraph_open") continue;
    if (details > 0) continue;
    let line = "";
    for (const child of token.children ?? []) {
      if (child.type === "softbreak" || child.type === "hardbreak") {
        lines.push(line);
        line = "";
      } else if (child.type === "text") {
        line += child.content;
      } else if (EMPHASIS.has(child.type)) {
        // `_` and `*` read back as typed: `1_-_2` is a tag, not emphasis, to the person who wrote it.
        line += child.markup;
      } else {
        line += NOT_TEXT;
      }
    }
    lines.push(line);
  }
  return lines;
}

export function parseCommandLine(line: string): Command | undefined {
  const withImage = WITH_IMAGE.exec(line);
  if (withImage) {
    const [, name, environment, image, tag, reason] = withImage;
    if (tag !== undefined && !isValidTag(tag)) return undefined;
    if (reason !== undefined && reason.trim() === "") return undefined;
    return {
      name: name as "promote" | "rollback",
      environment: environment!,
      ...(image !== undefined && tag !== undefined ? { image: { name: image, tag } } : {}),
      ...(reason !== undefined ? { overrideFreeze: reason.trim() } : {}),
    };
  }
  const environmentOnly = ENVIRONMENT_ONLY.exec(line);
  if (environmentOnly)
    return { name: environmentOnly[1] as "hold" | "unhold", environment: environmentOnly[2]! };
  const unfloor = UNFLOOR.exec(line);
  if (unfloor)
    return unfloor[2] !== undefined
      ? { name: "unfloor", environment: unfloor[1]!, imageName: unfloor[2] }
      : { name: "unfloor", environment: unfloor[1]! };
  if (STATUS.test(line)) return { name: "status" };
  const history = HISTORY.exec(line);
  if (history) {
    const [, environment, image, key, date] = history;
    if (date !== undefined && parseHistoryDate(date) === undefined) return undefined;
    return {
      name: "history",
      environment: environment!,
      ...(image !== undefined ? { imageName: image } : {}),
      ...(key !== undefined && date !== undefined ? { [key]: date } : {}),
    };
  }
  const why = WHY.exec(line);
  if (why) {
    const [, environment, imageName, tag] = why;
    if (tag !== undefined && !isValidTag(tag)) return undefined;
    return {
      name: "why",
      environment: environment!,
      imageName: imageName!,
      ...(tag !== undefined ? { tag } : {}),
    };
  }
  return undefined;
}

export function formatCommand(command: Command): string {
  switch (command.name) {
    case "status":
      return "/ferry status";
    case "history":
      return `/ferry history ${command.environment}${command.imageName ? ` ${command.imageName}` : ""}${command.since ? ` --since ${command.since}` : ""}${command.at ? ` --at ${command.at}` : ""}`;
    case "why":
      return `/ferry why ${command.environment} ${command.imageName}${command.tag !== undefined ? `@${command.tag}` : ""}`;
    case "hold":
    case "unhold":
      return `/${command.name} ${command.environment}`;
    case "unfloor":
      return `/unfloor ${command.environment}${command.imageName !== undefined ? ` ${command.imageName}` : ""}`;
    default:
      return `/${command.name} ${command.environment}${command.image ? ` ${command.image.name}@${command.image.tag}` : ""}${command.overrideFreeze !== undefined ? ` --override-freeze "${command.overrideFreeze}"` : ""}`;
  }
}
