import { compileGlob, type Glob } from "../patterns/glob.js";
import { PatternError } from "../patterns/engine.js";

/**
 * A path pattern of generated config (docs/config.md "Generated images and environments"): one
 * glob per `/`-separated segment, matched segment by segment on the one linear-time engine
 * (src/core/patterns). A segment holding a wildcard (`*`, `?`, `[…]`, `{a,b}`) captures the whole
 * segment it matched, numbered from 1 left to right; `**` is refused, so a pattern always matches
 * at one depth and a match's captures are well defined.
 */
export interface SegmentPattern {
  pattern: string;
  /** The captured segments when `path` matches as a whole, else undefined. */
  match(path: string): string[] | undefined;
}

const WILDCARD = /[*?[{]/;
const MAX_SEGMENTS = 32;

export function compileSegmentPattern(pattern: string): SegmentPattern {
  const segments = pattern.split("/");
  if (pattern.length === 0) throw new PatternError("pattern is empty");
  if (segments.length > MAX_SEGMENTS) throw new PatternError(`more than ${MAX_SEGMENTS} segments`);
  if (segments.some((segment) => segment === ""))
    throw new PatternError("empty segment (a leading, trailing or doubled /)");
  if (segments.some((segment) => segment === "." || segment === ".."))
    throw new PatternError("segments . and .. are not allowed");
  if (segments.some((segment) => segment.includes("**")))
    throw new PatternError("** is not supported: write one * per folder level");
  const parts: { literal?: string; glob?: Glob }[] = segments.map((segment) =>
    WILDCARD.test(segment) ? { glob: compileGlob(segment, "glob") } : { literal: unescape(segment) },
  );
  return {
    pattern,
    match(path) {
      const names = path.split("/");
      if (names.length !== parts.length) return undefined;
      const captures: string[] = [];
      for (const [index, part] of parts.entries()) {
        const name = names[index]!;
        if (part.glob) {
          if (!part.glob.test(name)) return undefined;
          captures.push(name);
        } else if (part.literal !== name) return undefined;
      }
      return captures;
    },
  };
}

/** Why the pattern cannot be compiled, or undefined when it can. */
export function segmentPatternProblem(pattern: string): string | undefined {
  try {
    compileSegmentPattern(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof PatternError) return error.message;
    throw error;
  }
}

function unescape(segment: string): string {
  return segment.replace(/\\(.)/g, "$1");
}
