/**
 * CODEOWNERS path patterns (docs/config.md "Who may promote what"), matched by the one engine
 * (engine.ts). GitHub reads them as gitignore patterns, except that `!` negation, `[ ]` ranges and
 * escaping a leading `#` do not work there: such a pattern is refused here, and the caller skips
 * its line as GitHub does. Paths are repo-relative, without a leading `/`, case-sensitive.
 *
 * - A pattern starting with `/`, or with a `/` before its last character, is anchored at the root;
 *   one without (`*.js`, `apps/`) matches at any depth.
 * - A trailing `/` matches everything below that folder; a pattern without it matches the file of
 *   that name, or everything below the folder of that name (`/apps/github`).
 * - `*` and `?` stop at `/`; a trailing `/*` matches only the folder's own files (`docs/*` is not
 *   `docs/a/b.md`); `**` as a whole segment matches any number of folders (a
 *   leading `**` segment before `/logs` matches `logs` folders at any depth).
 */

import { compileRE2, PatternError } from "./engine.js";

export interface PathPattern {
  pattern: string;
  test(path: string): boolean;
}

/** Compiles one CODEOWNERS pattern; throws PatternError with a one-line reason for one GitHub skips. */
export function compileCodeownersPattern(pattern: string): PathPattern {
  if (pattern === "") throw new PatternError("empty pattern");
  if (pattern.startsWith("!")) throw new PatternError("negation (!) does not work in CODEOWNERS");
  if (pattern.startsWith("\\#")) throw new PatternError("escaping a leading # does not work in CODEOWNERS");
  if (/[[\]]/.test(pattern)) throw new PatternError("character ranges ([ ]) do not work in CODEOWNERS");
  if (pattern.includes("***")) throw new PatternError("three asterisks in a row");
  if (pattern === "/") return { pattern, test: () => false };
  // A literal anchored pattern (the common `/apps/shop/ @team`) needs no automaton.
  if (pattern.startsWith("/") && !/[*?\\]/.test(pattern)) {
    const prefix = pattern.slice(1);
    return {
      pattern,
      test: (path) =>
        prefix.endsWith("/") ? path.startsWith(prefix) : path === prefix || path.startsWith(`${prefix}/`),
    };
  }
  const re = compileRE2(`^${translate(pattern)}$`, pattern);
  return { pattern, test: (path) => re.test(path) };
}

function translate(pattern: string): string {
  let segments = pattern.split("/");
  if (segments[0] === "") segments = segments.slice(1);
  else if ((segments.length === 1 || (segments.length === 2 && segments[1] === "")) && segments[0] !== "**")
    segments = ["**", ...segments];
  if (segments.length > 1 && segments.at(-1) === "") segments[segments.length - 1] = "**";
  const last = segments.length - 1;
  let out = "";
  let slash = false;
  for (const [index, segment] of segments.entries()) {
    if (segment === "**") {
      if (index === 0 && index === last) out += ".+";
      else if (index === 0) {
        out += "(?:.+/)?";
        slash = false;
      } else if (index === last) out += "/.*";
      else {
        out += "(?:/.+)?";
        slash = true;
      }
      continue;
    }
    if (slash) out += "/";
    slash = true;
    if (segment === "*") {
      out += "[^/]+";
      continue;
    }
    out += translateSegment(segment);
    // No trailing slash: the name may be a folder, and then everything below it matches.
    if (index === last) out += "(?:/.*)?";
  }
  return out;
}

function translateSegment(segment: string): string {
  let out = "";
  for (let at = 0; at < segment.length; at++) {
    const char = segment[at]!;
    if (char === "\\") {
      const next = segment[at + 1];
      if (next === undefined) throw new PatternError("ends with a lone \\");
      out += quote(next);
      at += 1;
    } else if (char === "*") out += "[^/]*";
    else if (char === "?") out += "[^/]";
    else out += quote(char);
  }
  return out;
}

function quote(char: string): string {
  return /[\\.+*?()|[\]{}^$]/.test(char) ? `\\${char}` : char;
}
