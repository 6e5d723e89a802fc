/**
 * The `allow` regular expression and the `extract` template of a tag policy.
 *
 * Flux (`filterTags.pattern`, Go RE2) and Argo CD Image Updater (`allow-tags: regexp:…`, Go
 * regexp) both *search* the tag: the expression matches anywhere unless the user anchors it with
 * `^…$`, as their documented examples do (`^main-[a-f0-9]+-(?P<ts>[0-9]+)`, `^[0-9a-f]{7}$`).
 * Ferry keeps that meaning so copied policies behave the same. Go spells named groups
 * `(?P<name>…)`; JavaScript spells them `(?<name>…)`, so Go's spelling is translated.
 */

import { setFlagsFromString } from "node:v8";

const GO_NAMED_GROUP = /\(\?P</g;
const NAMED_GROUP = /\(\?<([A-Za-z_][A-Za-z0-9_]*)>/g;
/** `$$`, `${name}` or `$name` (the longest run of word characters, as Go's Regexp.Expand reads it). */
const TEMPLATE_TOKEN = /\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g;

/** Translates Go's `(?P<name>` into JavaScript's `(?<name>`; everything else is left as written. */
export function toJavaScriptPattern(pattern: string): string {
  return pattern.replace(GO_NAMED_GROUP, "(?<");
}

/**
 * Compiles `allow` once per policy; throws SyntaxError for an invalid expression or for syntax
 * that Go's RE2 lacks (see `unsupportedSyntax`).
 *
 * No `u` flag: tags are ASCII, and only patterns without it can fall back to V8's linear-time
 * engine when the process enables `--enable-experimental-regexp-engine-on-excessive-backtracks`
 * (`enableRegexpBacktrackFallback`), which keeps a pattern such as `^(a+)+$` from hanging a worker
 * the way RE2 never would. No `g`/`y`, so `exec` keeps no state between tags.
 */
export function compileAllow(pattern: string): RegExp {
  const unsupported = unsupportedSyntax(pattern);
  if (unsupported !== undefined) throw new SyntaxError(unsupported);
  return new RegExp(toJavaScriptPattern(pattern));
}

/**
 * Backreferences and lookarounds: RE2 (Flux, Argo CD Image Updater) rejects them, so no policy
 * written for those tools uses them, and they are what V8's linear engine cannot run.
 */
export function unsupportedSyntax(pattern: string): string | undefined {
  let inClass = false;
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index];
    if (char === "\\") {
      const next = pattern[index + 1] ?? "";
      if (!inClass && (/[1-9]/.test(next) || next === "k"))
        return `backreference \\${next} is not supported (Go RE2 syntax only)`;
      index++;
    } else if (inClass) {
      if (char === "]") inClass = false;
    } else if (char === "[") {
      inClass = true;
    } else if (char === "(" && pattern[index + 1] === "?") {
      const kind = pattern.slice(index + 2, index + 4);
      if (kind.startsWith("=") || kind.startsWith("!") || kind === "<=" || kind === "<!") {
        return `lookaround (?${kind.startsWith("<") ? kind : kind[0]} is not supported (Go RE2 syntax only)`;
      }
    }
  }
  return undefined;
}

/** Names of the groups `(?<name>…)` or `(?P<name>…)` that a pattern defines. */
export function namedGroups(pattern: string): Set<string> {
  return new Set([...toJavaScriptPattern(pattern).matchAll(NAMED_GROUP)].map((match) => match[1]!));
}

/** Names an `extract` template references (`$ts`, `${version}`); `$$` is a literal dollar. */
export function templateReferences(template: string): string[] {
  const names: string[] = [];
  for (const match of template.matchAll(TEMPLATE_TOKEN)) {
    const name = match[2] ?? match[3];
    if (name !== undefined) names.push(name);
  }
  return names;
}

/** One piece of a compiled template: literal text or a group name. */
type TemplatePart = { text: string } | { group: string };

/**
 * Compiles an `extract` template into a function of a regex match, the way Go's
 * `Regexp.ExpandString` expands it: a group that did not take part expands to "".
 */
export function compileExtract(template: string): (groups: Record<string, string | undefined>) => string {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of template.matchAll(TEMPLATE_TOKEN)) {
    if (match.index > last) parts.push({ text: template.slice(last, match.index) });
    const name = match[2] ?? match[3];
    parts.push(name === undefined ? { text: "$" } : { group: name });
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push({ text: template.slice(last) });
  // The common case, a template that is exactly one group (`$ts`), avoids string building.
  if (parts.length === 1 && "group" in parts[0]!) {
    const group = parts[0].group;
    return (groups) => groups[group] ?? "";
  }
  return (groups) => {
    let out = "";
    for (const part of parts) out += "text" in part ? part.text : (groups[part.group] ?? "");
    return out;
  };
}

let fallbackEnabled = false;

/**
 * Lets V8 switch a regex that backtracks excessively to its linear-time engine, so a catastrophic
 * `allow` pattern (`^(a+)+$`) costs milliseconds instead of hanging the process. Process-wide:
 * only entry points call it (the CLI, the app server), before any policy is compiled. Idempotent.
 */
export function enableRegexpBacktrackFallback(): void {
  if (fallbackEnabled) return;
  setFlagsFromString("--enable-experimental-regexp-engine-on-excessive-backtracks");
  fallbackEnabled = true;
}
