/**
 * The one engine every pattern Ferry reads from a config is matched with (docs/security.md
 * "Patterns"): RE2, through re2js (a port of Go's `regexp`). RE2 compiles a pattern into an
 * automaton and matches it without backtracking, so the time a match takes grows linearly with
 * the text, whatever the pattern (https://github.com/google/re2/wiki/WhyRE2): no glob or regular
 * expression in a config can stall the process. JavaScript's RegExp and minimatch both backtrack
 * and are never handed a pattern from a config.
 *
 * Every pattern is bounded in length before it is compiled, so compiling and the size of the
 * automaton are bounded too; compiled patterns are cached by source, since each environment and
 * image resolves its own policy from the same config.
 */

import { RE2JS } from "re2js";

/** Longest pattern (glob or regular expression) a config may hold, in characters. */
export const MAX_PATTERN_LENGTH = 1024;

/** A pattern that cannot be compiled: its message is one line, without the pattern itself. */
export class PatternError extends SyntaxError {
  constructor(message: string) {
    super(message);
    this.name = "PatternError";
  }
}

const MAX_CACHED = 512;
const cache = new Map<string, RE2JS>();

/** A length problem, or undefined when the pattern is short enough to compile. */
export function lengthProblem(pattern: string): string | undefined {
  return pattern.length > MAX_PATTERN_LENGTH
    ? `pattern is ${pattern.length} characters long, over the ${MAX_PATTERN_LENGTH} limit`
    : undefined;
}

/**
 * Compiles an RE2 expression (Go's syntax), cached by source. Throws PatternError with RE2's
 * message for an invalid expression, a backreference or a lookaround, and for one over the
 * length bound. `written` is what the user wrote, when `source` was derived from it (a glob's
 * translation is longer than the glob): the bound applies to what was written.
 */
export function compileRE2(source: string, written: string = source): RE2JS {
  const tooLong = lengthProblem(written);
  if (tooLong !== undefined) throw new PatternError(tooLong);
  const cached = cache.get(source);
  if (cached !== undefined) return cached;
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (error) {
    // re2js reports Go's messages: "error parsing regexp: invalid escape sequence: `\1`".
    throw new PatternError((error as Error).message.replace(/^error parsing regexp: /, ""));
  }
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(source, re);
  return re;
}
