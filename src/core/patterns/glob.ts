/**
 * Globs from a config, translated to RE2 and matched by the one engine (engine.ts), so a glob
 * matches in time linear in the text it is tested against (docs/config.md "Globs").
 *
 * Three syntaxes, each anchored at both ends:
 * - `glob` (tag policies' `ignore`): `*` any run of characters, `?` one character, `[a-z]`,
 *   `[!0-9]`/`[^0-9]`, `[[:digit:]]` classes, `{a,b}` alternatives, the extglobs `@(a|b)`,
 *   `?(a|b)`, `+(a|b)`, `*(a|b)`, and `\` to take the next character literally: what minimatch
 *   means by them for a name without `/`. A negated extglob `!(…)` is refused: it matches the
 *   complement of a pattern, which RE2 has no way to say; so is a brace sequence `{1..9}`.
 * - `path`: the same, where `*`, `?` and classes stop at `/`, and `**` as a whole path segment
 *   matches any number of segments (`a/**` everything under `a/`).
 * - `wildcard` (signer identities, SLSA builder ids): only `*` is special, matching any run of
 *   characters; everything else is literal (the form cosign's certificate identity takes).
 */

import { compileRE2, PatternError } from "./engine.js";

export type GlobSyntax = "glob" | "path" | "wildcard";

/** A compiled glob: `test` is true when the whole text matches. */
export interface Glob {
  pattern: string;
  /** The RE2 expression the glob was translated to. */
  source: string;
  test(text: string): boolean;
}

/** Compiles a glob once; throws PatternError with a one-line reason when it cannot be. */
export function compileGlob(pattern: string, syntax: GlobSyntax = "glob"): Glob {
  const body =
    syntax === "wildcard" ? wildcardToRE2(pattern) : new Translator(pattern, syntax === "path").all();
  const source = `^(?s:${body})$`;
  const re = compileRE2(source, pattern);
  return { pattern, source, test: (text) => re.test(text) };
}

/** Why the glob cannot be compiled, or undefined when it can. */
export function globProblem(pattern: string, syntax: GlobSyntax = "glob"): string | undefined {
  try {
    compileGlob(pattern, syntax);
    return undefined;
  } catch (error) {
    if (error instanceof PatternError) return error.message;
    throw error;
  }
}

function wildcardToRE2(pattern: string): string {
  return pattern.split("*").map(quote).join(".*");
}

/** RE2's metacharacters, quoted one by one (re2js's \Q…\E would end at a literal `\E`). */
function quote(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&");
}

/** POSIX classes RE2 knows inside brackets, as minimatch accepts them. */
const POSIX_CLASSES = new Set([
  "alnum",
  "alpha",
  "ascii",
  "blank",
  "cntrl",
  "digit",
  "graph",
  "lower",
  "print",
  "punct",
  "space",
  "upper",
  "word",
  "xdigit",
]);

const EXTGLOB: Record<string, string> = { "@": "", "?": "?", "+": "+", "*": "*" };

/** A recursive-descent translation of one glob into an RE2 expression. */
class Translator {
  private at = 0;

  constructor(
    private readonly pattern: string,
    private readonly path: boolean,
  ) {}

  all(): string {
    const out = this.sequence(new Set());
    if (this.at < this.pattern.length) throw new PatternError(`unexpected ${this.pattern[this.at]}`);
    return out;
  }

  private get one(): string {
    return this.path ? "[^/]" : ".";
  }

  /** Translates up to (not over) one of the `stop` characters at this nesting level. */
  private sequence(stop: Set<string>): string {
    let out = "";
    while (this.at < this.pattern.length) {
      const char = this.pattern[this.at]!;
      if (stop.has(char)) break;
      const next = this.pattern[this.at + 1];
      if (next === "(" && (char in EXTGLOB || char === "!")) {
        if (char === "!")
          throw new PatternError(
            "a negated extglob !(…) cannot be matched by RE2; list what to match instead, or use allow",
          );
        this.at += 2;
        out += `(?:${this.alternatives("|", ")")})${EXTGLOB[char]}`;
        continue;
      }
      switch (char) {
        case "\\":
          if (next === undefined) throw new PatternError("ends with a lone \\");
          out += quote(next);
          this.at += 2;
          break;
        case "*":
          out += this.star();
          break;
        case "?":
          out += this.one;
          this.at += 1;
          break;
        case "[":
          out += this.characterClass();
          break;
        case "{":
          out += this.braces();
          break;
        default:
          out += quote(char);
          this.at += 1;
      }
    }
    return out;
  }

  /** `*`, or in a path `**` as a whole segment: any number of segments. */
  private star(): string {
    let end = this.at;
    // A `*` right before `(` opens the extglob `*(…)`, not part of this run.
    while (this.pattern[end] === "*" && this.pattern[end + 1] !== "(") end += 1;
    const stars = end - this.at;
    const segmentStart = this.at === 0 || this.pattern[this.at - 1] === "/";
    const segmentEnd = end === this.pattern.length || this.pattern[end] === "/";
    this.at = end;
    if (!this.path) return ".*";
    if (stars < 2 || !segmentStart || !segmentEnd) return "[^/]*";
    // `a/**/b` also matches `a/b`; a trailing `a/**` matches everything below `a/`.
    if (this.pattern[end] === "/") {
      this.at += 1;
      return "(?:[^/]*(?:/[^/]*)*/)?";
    }
    return ".*";
  }

  /** `[…]`: a class, or a literal `[` when it never closes (as minimatch reads it). */
  private characterClass(): string {
    let at = this.at + 1;
    let negate = false;
    if (this.pattern[at] === "!" || this.pattern[at] === "^") {
      negate = true;
      at += 1;
    }
    let items = "";
    let first = true;
    while (at < this.pattern.length && (this.pattern[at] !== "]" || first)) {
      first = false;
      const posix = /^\[:([a-z]+):\]/.exec(this.pattern.slice(at));
      if (posix) {
        if (!POSIX_CLASSES.has(posix[1]!)) throw new PatternError(`unknown character class [:${posix[1]}:]`);
        items += posix[0];
        at += posix[0].length;
        continue;
      }
      let char = this.pattern[at]!;
      if (char === "\\" && at + 1 < this.pattern.length) char = this.pattern[++at]!;
      if (this.pattern[at + 1] === "-" && at + 2 < this.pattern.length && this.pattern[at + 2] !== "]") {
        let last = this.pattern[at + 2]!;
        let width = 3;
        if (last === "\\" && at + 3 < this.pattern.length) {
          last = this.pattern[at + 3]!;
          width = 4;
        }
        if (last < char) throw new PatternError(`invalid range ${char}-${last} in a character class`);
        items += `${classChar(char)}-${classChar(last)}`;
        at += width;
        continue;
      }
      items += classChar(char);
      at += 1;
    }
    if (at >= this.pattern.length) {
      this.at += 1;
      return "\\[";
    }
    this.at = at + 1;
    if (negate) return `[^${this.path ? "/" : ""}${items}]`;
    return `[${items}]`;
  }

  /** `{a,b}`: alternatives; `{a}` without a comma is literal text, as minimatch reads it. */
  private braces(): string {
    const start = this.at;
    this.at += 1;
    const before = this.at;
    const branches: string[] = [];
    for (;;) {
      branches.push(this.sequence(new Set([",", "}"])));
      if (this.at >= this.pattern.length) {
        // Never closed: the `{` is literal.
        this.at = start + 1;
        return "\\{";
      }
      if (this.pattern[this.at] === "}") break;
      this.at += 1;
    }
    this.at += 1;
    if (branches.length === 1) {
      const inner = this.pattern.slice(before, this.at - 1);
      if (/^(-?\d+\.\.-?\d+|[A-Za-z]\.\.[A-Za-z])(\.\.-?\d+)?$/.test(inner))
        throw new PatternError(
          `the brace sequence {${inner}} is not supported; list the values, e.g. {1,2,3}`,
        );
      return `\\{${branches[0]}\\}`;
    }
    return `(?:${branches.join("|")})`;
  }

  /** The `a|b` inside an extglob, up to its closing `)`. */
  private alternatives(separator: string, close: string): string {
    const branches: string[] = [];
    for (;;) {
      branches.push(this.sequence(new Set([separator, close])));
      if (this.at >= this.pattern.length) throw new PatternError(`an extglob is not closed with ${close}`);
      const char = this.pattern[this.at]!;
      this.at += 1;
      if (char === close) return branches.join("|");
    }
  }
}

function classChar(char: string): string {
  return /[\\\][^-]/.test(char) ? `\\${char}` : char;
}
