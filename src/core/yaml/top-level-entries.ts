import { LineCounter, visit, type Document, type Range } from "yaml";
import {
  MAX_YAML_CHARS,
  YAML_PARSE_OPTIONS,
  type DocumentSpan,
  type Keep,
  type KeepRule,
  type ParsedYaml,
  type PartialParse,
  type TopLevelEntry,
} from "./parsed-yaml.js";
import { parseAllDocumentsUnique } from "./unique-keys.js";

/**
 * Parsing only the part of a large file that can matter. A YAML document whose root is a block
 * mapping written at column 0 (every values file, manifest and kustomization in practice) is a
 * run of top-level entries, each starting on a line that begins at column 0 with a plain key:
 * everything an entry holds (nested maps, block scalars, multi-line flow collections and quoted
 * strings) is indented or belongs to it, and a line at column 0 that is none of these is an error
 * the full parse would report too. Entries that cannot hold the image are left out of the parse;
 * the rest are parsed together, and node ranges are moved back to their offsets in the file.
 *
 * Anything unusual (directives, `...`, a root that is not such a mapping, a parse error in the
 * kept text) falls back to parsing the whole file, so the answer is always the full parse's.
 */

const DOCUMENT_MARKER = /^(?:---|\.\.\.)(?:[ \t\r]|$)/;
const PLAIN_KEY = /^([^\s#:,[\]{}&*!|>'"%@`?-][^\r\n]*?)[ \t]*:(?:[ \t\r]|$)/;

/** The documents and top-level entries of a text, or undefined when it has directives, `...` or a lone CR. */
export function topLevelLayout(text: string): DocumentSpan[] | undefined {
  // YAML also breaks lines at a lone CR; lines here are split at LF only.
  if (/\r(?!\n)/.test(text)) return undefined;
  const documents: DocumentSpan[] = [];
  interface Open {
    start: number;
    entries: TopLevelEntry[];
    sliceable: boolean;
    /** Started by `---`, or holds content: a document of its own even when empty. */
    counts: boolean;
  }
  let current: Open = { start: 0, entries: [], sliceable: true, counts: false };
  const close = (end: number): void => {
    const last = current.entries[current.entries.length - 1];
    if (last) last.end = end;
    const span: DocumentSpan = { start: current.start, end };
    if (current.sliceable && current.entries.length > 0) span.entries = current.entries;
    documents.push(span);
  };
  let lineStart = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (lineStart < text.length) {
    let lineEnd = text.indexOf("\n", lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    const code = text.charCodeAt(lineStart);
    // Most lines are indented content of the current entry: nothing to learn from them.
    // Blank lines and comments at column 0 change nothing either.
    if (
      ((code === 0x20 || code === 0x09) && current.entries.length > 0) ||
      code === 0x0a ||
      code === 0x0d ||
      code === 0x23
    ) {
      lineStart = lineEnd + 1;
      continue;
    }
    const line = text.slice(lineStart, lineEnd);
    const char = line[0];
    if (DOCUMENT_MARKER.test(line)) {
      if (line.startsWith("...")) return undefined;
      // Comments before the first `---` belong to its document.
      if (current.counts) {
        close(lineStart);
        current = { start: lineStart, entries: [], sliceable: true, counts: true };
      } else current.counts = true;
      // Content on the `---` line itself (`--- !tag`, `--- |`) is not a plain mapping.
      if (!/^---[ \t]*(?:#.*)?\r?$/.test(line)) current.sliceable = false;
    } else if (char === "%") {
      return undefined;
    } else if (/^[ \t]*(?:#.*)?\r?$/.test(line)) {
      // Blank and comment lines belong to the entry (or prefix) they follow.
    } else {
      current.counts = true;
      if (char === " " || char === "\t" || (char === "-" && /^-(?:[ \t\r]|$)/.test(line))) {
        // Indented content, or a block sequence at column 0 under the previous key (`images:\n- …`).
        if (current.entries.length === 0) current.sliceable = false;
      } else {
        const key = PLAIN_KEY.exec(line);
        if (!key) current.sliceable = false;
        else {
          const last = current.entries[current.entries.length - 1];
          if (last) last.end = lineStart;
          current.entries.push({ start: lineStart, end: text.length, key: key[1]!, indent: 0 });
        }
      }
    }
    lineStart = lineEnd + 1;
  }
  close(text.length);
  return documents;
}

/** How deep block mappings are narrowed; deeper ones are parsed whole. */
const MAX_NARROWING_DEPTH = 16;

/** Which entries to parse: those the rule names, one at least, and every anchor and alias. */
export function keptEntries(text: string, documents: DocumentSpan[], rule: KeepRule): Keep[][] {
  return documents.map((document) =>
    document.entries ? keepAmong(text, document.entries, document.end, rule, 0) : [],
  );
}

function keepAmong(
  text: string,
  entries: TopLevelEntry[],
  end: number,
  rule: KeepRule,
  depth: number,
): Keep[] {
  const containing = (needle: string): Set<number> => {
    // Entries cover their parent from the first key to its end; skip to the next entry on a hit.
    const found = new Set<number>();
    let index = 0;
    let at = text.indexOf(needle, entries[0]!.start);
    while (at >= 0 && at < end) {
      while (entries[index]!.end <= at) index++;
      found.add(index);
      at = text.indexOf(needle, entries[index]!.end);
    }
    return found;
  };
  const kept: Keep[] = entries.map((entry) => rule.keys.has(entry.key));
  // A backslash may spell the name with an escape; such an entry is read, not guessed at.
  for (const needle of [...rule.needles, "\\"]) for (const index of containing(needle)) kept[index] = true;
  const anchored = new Set([...containing("&"), ...containing("*")]);
  if (depth === 0) {
    // Anchors and aliases tie entries together: keep them all once one kept entry has one.
    if ([...anchored].some((index) => kept[index])) for (const index of anchored) kept[index] = true;
    if (!kept.some(Boolean)) kept[0] = true;
  }
  if (!rule.narrow || depth >= MAX_NARROWING_DEPTH) return kept;
  // A kept entry holding a block mapping is narrowed the same way, one level down. Image blocks
  // (structural keys) and entries with anchors or aliases are kept whole.
  kept.forEach((keep, index) => {
    const entry = entries[index]!;
    if (keep !== true || rule.keys.has(entry.key) || anchored.has(index)) return;
    const children = childEntries(text, entry);
    if (!children || new Set(children.map((child) => child.key)).size !== children.length) return;
    const inner = keepAmong(text, children, entry.end, rule, depth + 1);
    if (inner.every((child) => child === false) || inner.every((child) => child === true)) return;
    entry.children = children;
    kept[index] = inner;
  });
  return kept;
}

/**
 * The entries of the block mapping an entry holds (`key:` alone on its line, then keys at one
 * deeper indentation), or undefined when its value is anything else. As at the top level, every
 * line of a child is indented deeper than its key, or is a comment, a blank, or a block sequence
 * written at the key's indentation.
 */
export function childEntries(text: string, entry: TopLevelEntry): TopLevelEntry[] | undefined {
  let headerEnd = text.indexOf("\n", entry.start);
  if (headerEnd < 0 || headerEnd + 1 >= entry.end) return undefined;
  const header = text.slice(entry.start + entry.indent, headerEnd);
  const key = PLAIN_KEY.exec(header);
  if (!key || !/^[ \t]*(?:#.*)?\r?$/.test(header.slice(key[0].length))) return undefined;
  const children: TopLevelEntry[] = [];
  let indent = -1;
  for (let lineStart = headerEnd + 1; lineStart < entry.end; lineStart = headerEnd + 1) {
    headerEnd = text.indexOf("\n", lineStart);
    if (headerEnd < 0 || headerEnd > entry.end) headerEnd = entry.end;
    let at = lineStart;
    while (at < headerEnd && text.charCodeAt(at) === 0x20) at++;
    const spaces = at - lineStart;
    // Deeper lines belong to the current child, whatever they hold.
    if (indent >= 0 && spaces > indent) continue;
    const line = text.slice(lineStart, headerEnd);
    if (/^[ \t]*(?:#.*)?\r?$/.test(line)) continue;
    if (line[spaces] === "\t") return undefined;
    if (indent < 0) {
      indent = spaces;
      if (indent <= entry.indent) return undefined;
    }
    if (spaces < indent) return undefined;
    if (spaces > indent) continue;
    const rest = line.slice(spaces);
    if (/^-(?:[ \t\r]|$)/.test(rest)) {
      if (children.length === 0) return undefined;
      continue;
    }
    const childKey = PLAIN_KEY.exec(rest);
    if (!childKey) return undefined;
    const last = children[children.length - 1];
    if (last) last.end = lineStart;
    children.push({ start: lineStart, end: entry.end, key: childKey[1]!, indent });
  }
  return children.length > 0 ? children : undefined;
}

/** The kept text, and for each of its pieces where it sits in the file. */
function keptText(
  text: string,
  documents: DocumentSpan[],
  kept: Keep[][],
): { text: string; pieces: { from: number; to: number; at: number }[] } {
  const pieces: { from: number; to: number; at: number }[] = [];
  let length = 0;
  const add = (from: number, to: number): void => {
    if (to <= from) return;
    const last = pieces[pieces.length - 1];
    if (last && last.to === from) last.to = to;
    else pieces.push({ from, to, at: 0 });
  };
  const addEntries = (entries: TopLevelEntry[], keeps: Keep[]): void => {
    entries.forEach((entry, index) => {
      const keep = keeps[index]!;
      if (keep === true) add(entry.start, entry.end);
      else if (Array.isArray(keep)) {
        add(entry.start, entry.children![0]!.start);
        addEntries(entry.children!, keep);
      }
    });
  };
  documents.forEach((document, index) => {
    if (!document.entries) return add(document.start, document.end);
    add(document.start, document.entries[0]!.start);
    addEntries(document.entries, kept[index]!);
  });
  for (const piece of pieces) {
    piece.at = length;
    length += piece.to - piece.from;
  }
  return { text: pieces.map((piece) => text.slice(piece.from, piece.to)).join(""), pieces };
}

/**
 * Parses the entries of `text` the rule keeps, with ranges and line numbers of the whole file.
 * Undefined when the file cannot be sliced or the kept text does not parse cleanly: the caller
 * then parses the whole file (and reports its errors as usual).
 */
export function parseKept(text: string, rule: KeepRule): ParsedYaml | undefined {
  if (text.length > MAX_YAML_CHARS) return undefined;
  const documents = topLevelLayout(text);
  if (!documents || documents.every((document) => !document.entries)) return undefined;
  // A duplicated key is refused by the full parse, wherever it is: let that parse say so.
  for (const document of documents) {
    const keys = new Set((document.entries ?? []).map((entry) => entry.key));
    if (keys.size !== (document.entries ?? []).length) return undefined;
  }
  const kept = keptEntries(text, documents, rule);
  if (kept.every((flags, index) => !documents[index]!.entries || flags.every((keep) => keep === true)))
    return undefined;
  const slice = keptText(text, documents, kept);
  const parsed = parseAllDocumentsUnique(slice.text, YAML_PARSE_OPTIONS);
  if (!Array.isArray(parsed) || parsed.length !== documents.length) return undefined;
  if (parsed.some((document) => document.errors.length > 0)) return undefined;
  const toFile = fileOffsets(slice.pieces);
  for (const document of parsed) {
    moveRange(document.range, toFile);
    visit(document, {
      Node(_key, node) {
        if (node.range) moveRange(node.range, toFile);
      },
    });
  }
  return { text, documents: parsed, lineCounter: lineCounterOf(text), partial: { documents, kept } };
}

/**
 * Re-parses an edited text the way `parseKept` parsed the original: the same entries kept. The
 * left-out entries must be byte for byte what they were, at the same places in the layout;
 * otherwise the edit reached beyond the parsed text and `why` says so.
 */
export function reparseKept(
  before: string,
  partial: PartialParse,
  after: string,
): { documents: Document.Parsed[] } | { why: string } {
  const documents = topLevelLayout(after);
  if (!documents || documents.length !== partial.documents.length)
    return { why: "the edit changed the file's documents" };
  const sameEntries = (now: TopLevelEntry[], was: TopLevelEntry[], keeps: Keep[]): string | undefined => {
    if (now.length !== was.length) return "the edit changed the keys of a map";
    for (const [index, entry] of now.entries()) {
      const old = was[index]!;
      const keep = keeps[index]!;
      if (entry.key !== old.key) return "the edit changed the keys of a map";
      if (keep === false && after.slice(entry.start, entry.end) !== before.slice(old.start, old.end))
        return `the edit reached the untouched key ${JSON.stringify(entry.key)}`;
      if (Array.isArray(keep)) {
        const children = childEntries(after, entry);
        if (!children) return `the edit changed the layout of ${JSON.stringify(entry.key)}`;
        if (after.slice(entry.start, children[0]!.start) !== before.slice(old.start, old.children![0]!.start))
          return `the edit reached the key line of ${JSON.stringify(entry.key)}`;
        const why = sameEntries(children, old.children!, keep);
        if (why) return why;
        entry.children = children;
      }
    }
    return undefined;
  };
  for (const [index, document] of documents.entries()) {
    const old = partial.documents[index]!;
    if ((document.entries === undefined) !== (old.entries === undefined))
      return { why: "the edit changed the layout of a document" };
    if (!document.entries || !old.entries) continue;
    const why = sameEntries(document.entries, old.entries, partial.kept[index]!);
    if (why) return { why };
  }
  const parsed = parseAllDocumentsUnique(keptText(after, documents, partial.kept).text, YAML_PARSE_OPTIONS);
  if (!Array.isArray(parsed)) return { documents: [] };
  const error = parsed.flatMap((document) => document.errors)[0];
  if (error) return { why: `the edited file does not parse (${error.message.split("\n")[0]!})` };
  return { documents: parsed };
}

/** Maps an offset in the kept text to the file: starts to the later piece, ends to the earlier. */
function fileOffsets(
  pieces: { from: number; to: number; at: number }[],
): (offset: number, isEnd: boolean) => number {
  return (offset, isEnd) => {
    let low = 0;
    let high = pieces.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      const at = pieces[middle]!.at;
      if (at < offset || (at === offset && !isEnd)) low = middle;
      else high = middle - 1;
    }
    const piece = pieces[low]!;
    return piece.from + (offset - piece.at);
  };
}

function moveRange(
  range: Range | null | undefined,
  toFile: (offset: number, isEnd: boolean) => number,
): void {
  if (!range) return;
  range[0] = toFile(range[0], false);
  range[1] = toFile(range[1], true);
  range[2] = toFile(range[2], true);
}

function lineCounterOf(text: string): LineCounter {
  const lineCounter = new LineCounter();
  lineCounter.addNewLine(0);
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) lineCounter.addNewLine(at + 1);
  return lineCounter;
}
