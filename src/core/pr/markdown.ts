/**
 * Escaping for text Ferry writes into PR bodies, comments and issues. Every user-controlled value
 * (tags, image names, environment names, reasons, logins) goes through one of these before it
 * lands in markdown, so a tag or a config value cannot inject links, HTML or table cells
 * (docs/reliability.md row 14).
 */

const MARKDOWN_SPECIAL = /[\\`*_{}[\]()#+\-.!|<>&~"'@:]/g;

/** Escapes text for inline markdown: punctuation backslash-escaped, `<`/`>`/`&` as entities, one line. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\r\n\u2028\u2029]+/g, " ").replace(MARKDOWN_SPECIAL, (char) => {
    if (char === "<") return "&lt;";
    if (char === ">") return "&gt;";
    if (char === "&") return "&amp;";
    if (char === "|") return "\\|";
    return `\\${char}`;
  });
}

/** Inline code that cannot be broken out of: backticks removed, pipes escaped for tables. */
export function inlineCode(text: string): string {
  const clean = text.replace(/[\r\n\u2028\u2029`]+/g, " ").replace(/\|/g, "\\|");
  return clean.length === 0 ? "" : `\`${clean}\``;
}

/**
 * Hidden machine-readable blocks `<!-- ferry:<name> {json} -->`. JSON is made safe inside an HTML
 * comment by escaping `<`, `>` and `&` as \u escapes (JSON.parse reads them back), so a value
 * containing `-->` cannot end the comment early.
 */
export function formatHiddenBlock(name: string, data: unknown): string {
  const json = JSON.stringify(data).replace(
    /[<>&]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return `<!-- ferry:${name} ${json} -->`;
}

/** Reads the first `<!-- ferry:<name> … -->` block back; undefined when absent or unreadable. */
export function parseHiddenBlock(name: string, text: string): unknown {
  const start = text.indexOf(`<!-- ferry:${name} `);
  if (start < 0) return undefined;
  const from = start + `<!-- ferry:${name} `.length;
  const end = text.indexOf(" -->", from);
  if (end < 0) return undefined;
  try {
    return JSON.parse(text.slice(from, end));
  } catch {
    return undefined;
  }
}

/** Replaces (or appends) a hidden block in a text, leaving the rest as it was. */
export function replaceHiddenBlock(name: string, text: string, data: unknown): string {
  const block = formatHiddenBlock(name, data);
  const start = text.indexOf(`<!-- ferry:${name} `);
  if (start < 0) return text.length === 0 ? block : `${text.replace(/\n*$/, "")}\n\n${block}`;
  const end = text.indexOf(" -->", start);
  return `${text.slice(0, start)}${block}${end < 0 ? "" : text.slice(end + 4)}`;
}
