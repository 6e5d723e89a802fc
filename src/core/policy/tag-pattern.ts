/**
 * The `allow` regular expression and the `extract` template of a tag policy.
 *
 * Flux (`filterTags.pattern`), Argo CD Image Updater (`allow-tags: regexp:…`) and Kargo
 * (`allowTags`) all compile these with Go's `regexp` package, which is RE2: so does Ferry, with
 * re2js (a port of Go's regexp), never with JavaScript's RegExp. Copied patterns then mean the
 * same thing (`[[:digit:]]`, `\pL`, `\A`, `\z`, `(?i)`, `(?P<name>…)`), backreferences and
 * lookarounds are refused as Go refuses them, and matching takes time linear in the tag's
 * length whatever the pattern (https://github.com/google/re2/wiki/WhyRE2), so no pattern in a
 * config can stall the process.
 *
 * All three *search* the tag: the expression matches anywhere unless the user anchors it with
 * `^…$`, as their documented examples do (`^main-[a-f0-9]+-(?P<ts>[0-9]+)`, `^[0-9a-f]{7}$`).
 */

import { compileRE2 } from "../patterns/engine.js";

/** What a match gives `extract`: the groups by number (0 = the whole match) and by name. */
export interface PatternMatch {
  groups: (string | undefined)[];
  named: Record<string, string | undefined>;
}

/** A compiled `allow` pattern: `match` searches a tag; undefined when it does not match. */
export interface TagPattern {
  source: string;
  match(tag: string): PatternMatch | undefined;
  test(tag: string): boolean;
  /** Number of capturing groups (numbered from 1). */
  groupCount: number;
  /** Names of the named groups, `(?P<name>…)` or `(?<name>…)`. */
  groupNames: Set<string>;
}

/**
 * Compiles `allow` with Go's RE2 syntax on the one pattern engine (src/core/patterns, cached by
 * source); throws a PatternError (a SyntaxError) with RE2's message for an invalid pattern, a
 * backreference, a lookaround, or one over the length bound.
 */
export function compileAllow(pattern: string): TagPattern {
  const re = compileRE2(pattern);
  const names = re.namedGroups();
  return {
    source: pattern,
    groupCount: re.groupCount(),
    groupNames: new Set(Object.keys(names)),
    test: (tag) => re.test(tag),
    match: (tag) => {
      const result = re.exec(tag);
      if (result === null) return undefined;
      const named: Record<string, string | undefined> = {};
      for (const [name, index] of Object.entries(names)) named[name] = result[index] as string | undefined;
      return { groups: [...result] as (string | undefined)[], named };
    },
  };
}

/** `$$`, `${name}` or `$name`: a name is the longest run of letters, digits and `_` (Go's Regexp.Expand). */
const TEMPLATE_TOKEN = /\$(?:(\$)|\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))/g;
const NUMBER = /^[0-9]+$/;

/** A group an `extract` template refers to: by number (`$1`) or by name (`$version`). */
export type GroupReference = { index: number } | { name: string };

/** The groups an `extract` template references (`$ts`, `${version}`, `$1`); `$$` is a literal dollar. */
export function templateReferences(template: string): GroupReference[] {
  const references: GroupReference[] = [];
  for (const match of template.matchAll(TEMPLATE_TOKEN)) {
    const name = match[2] ?? match[3];
    if (name !== undefined) references.push(toReference(name));
  }
  return references;
}

function toReference(name: string): GroupReference {
  return NUMBER.test(name) ? { index: Number.parseInt(name, 10) } : { name };
}

/** `$1` or `$name`, as written in a template: for messages. */
export function describeReference(reference: GroupReference): string {
  return "index" in reference ? `$${reference.index}` : `$${reference.name}`;
}

/** Is the reference a group of the pattern? */
export function definesGroup(pattern: TagPattern, reference: GroupReference): boolean {
  return "index" in reference
    ? reference.index >= 1 && reference.index <= pattern.groupCount
    : pattern.groupNames.has(reference.name);
}

/** One piece of a compiled template: literal text or a group reference. */
type TemplatePart = { text: string } | { group: GroupReference };

/**
 * Compiles an `extract` template into a function of a match, the way Go's `Regexp.ExpandString`
 * (which Flux's filter calls) expands it: `$1`/`${1}` is a numbered group, `$name`/`${name}` a
 * named one, and a group that did not take part, or that the pattern lacks, expands to "".
 */
export function compileExtract(template: string): (match: PatternMatch) => string {
  const parts: TemplatePart[] = [];
  let last = 0;
  for (const match of template.matchAll(TEMPLATE_TOKEN)) {
    if (match.index > last) parts.push({ text: template.slice(last, match.index) });
    const name = match[2] ?? match[3];
    parts.push(name === undefined ? { text: "$" } : { group: toReference(name) });
    last = match.index + match[0].length;
  }
  if (last < template.length) parts.push({ text: template.slice(last) });
  const expand = (reference: GroupReference, match: PatternMatch): string =>
    ("index" in reference ? match.groups[reference.index] : match.named[reference.name]) ?? "";
  // The common case, a template that is exactly one group (`$ts`), avoids string building.
  if (parts.length === 1 && "group" in parts[0]!) {
    const group = parts[0].group;
    return (match) => expand(group, match);
  }
  return (match) => {
    let out = "";
    for (const part of parts) out += "text" in part ? part.text : expand(part.group, match);
    return out;
  };
}
