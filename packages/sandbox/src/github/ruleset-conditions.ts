/**
 * A ruleset's `conditions.ref_name` (https://docs.github.com/en/rest/repos/rules#create-a-repository-ruleset):
 * `include` and `exclude` lists of full ref names or fnmatch patterns, plus `~ALL` (every branch)
 * and `~DEFAULT_BRANCH`. A ruleset applies to a ref when one include matches and no exclude does.
 * Patterns follow GitHub's fnmatch ("About rulesets" → "Using fnmatch syntax"): `*` matches any
 * run of characters but `/`, `**` any run including `/`, `?` one character, `[…]` a class. Each
 * pattern becomes an RE2 expression (re2js), so matching is linear in the ref's length.
 */
import { RE2JS } from "re2js";

export interface RefNameCondition {
  include: string[];
  exclude: string[];
}

const cache = new Map<string, RE2JS>();

function quote(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&");
}

/** The RE2 expression of one fnmatch pattern, anchored at both ends. */
export function fnmatchToRE2(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "*") {
      if (pattern[i + 1] === "*") {
        out += ".*";
        i++;
      } else out += "[^/]*";
    } else if (ch === "?") out += "[^/]";
    else if (ch === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end === -1) out += "\\[";
      else {
        let body = pattern.slice(i + 1, end);
        const negated = body.startsWith("!") || body.startsWith("^");
        if (negated) body = body.slice(1);
        out += `[${negated ? "^" : ""}${body.replace(/[\\\]^[]/g, "\\$&")}]`;
        i = end;
      }
    } else out += quote(ch);
  }
  return `^(?s:${out})$`;
}

function matches(pattern: string, ref: string): boolean {
  let re = cache.get(pattern);
  if (!re) {
    re = RE2JS.compile(fnmatchToRE2(pattern));
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, re);
  }
  return re.matcher(ref).matches();
}

function patternCovers(pattern: string, ref: string, defaultBranch: string): boolean {
  if (pattern === "~ALL") return ref.startsWith("refs/heads/");
  if (pattern === "~DEFAULT_BRANCH") return ref === `refs/heads/${defaultBranch}`;
  return matches(pattern, ref);
}

/** Whether a branch ruleset with this condition applies to `ref` (a full `refs/heads/…` name). */
export function conditionCovers(condition: RefNameCondition, ref: string, defaultBranch: string): boolean {
  return (
    condition.include.some((pattern) => patternCovers(pattern, ref, defaultBranch)) &&
    !condition.exclude.some((pattern) => patternCovers(pattern, ref, defaultBranch))
  );
}
