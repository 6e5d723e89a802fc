import { LineCounter, parseAllDocuments, visit, type Document, type Range } from "yaml";
import { MAX_YAML_CHARS, YAML_PARSE_OPTIONS, type ParsedYaml } from "./yaml-tree.js";

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

/** One top-level `key: …` entry: from its key line to the next entry's (comments included). */
export interface TopLevelEntry {
  start: number;
  end: number;
  key: string;
}

/** One YAML document of a file: its span, and its entries when it can be sliced. */
export interface DocumentSpan {
  start: number;
  end: number;
  /** Undefined when the document is not a block mapping at column 0 (parsed whole). */
  entries?: TopLevelEntry[];
}

/** What to keep: entries with one of these keys, or whose text contains one of these strings. */
export interface KeepRule {
  keys: ReadonlySet<string>;
  needles: readonly string[];
}

/** The parse of the kept text and how to redo it on an edited text. */
export interface PartialParse {
  documents: DocumentSpan[];
  /** Per document, per entry: whether it was parsed. */
  kept: boolean[][];
}

const DOCUMENT_MARKER = /^(?:---|\.\.\.)(?:[ \t\r]|$)/;
const PLAIN_KEY = /^([^\s#:,[\]{}&*!|>'"%@`?-][^\r\n]*?)[ \t]*:(?:[ \t\r]|$)/;

/** The documents and top-level entries of a text, or undefined when it has directives or `...`. */
export function topLevelLayout(text: string): DocumentSpan[] | undefined {
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
          current.entries.push({ start: lineStart, end: text.length, key: key[1]! });
        }
      }
    }
    lineStart = lineEnd + 1;
  }
  close(text.length);
  return documents;
}

/** Which entries to parse: those the rule names, one at least, and every anchor and alias. */
export function keptEntries(text: string, documents: DocumentSpan[], rule: KeepRule): boolean[][] {
  return documents.map((document) => {
    const entries = document.entries;
    if (!entries) return [];
    const containing = (needle: string): Set<number> => {
      // Entries cover the document from the first key to its end; skip to the next entry on a hit.
      const found = new Set<number>();
      let index = 0;
      let at = text.indexOf(needle, entries[0]!.start);
      while (at >= 0 && at < document.end) {
        while (entries[index]!.end <= at) index++;
        found.add(index);
        at = text.indexOf(needle, entries[index]!.end);
      }
      return found;
    };
    const kept = entries.map((entry) => rule.keys.has(entry.key));
    // A backslash may spell the name with an escape; such an entry is read, not guessed at.
    for (const needle of [...rule.needles, "\\"]) for (const index of containing(needle)) kept[index] = true;
    // Anchors and aliases tie entries together: keep them all once one kept entry has one.
    const anchored = new Set([...containing("&"), ...containing("*")]);
    if ([...anchored].some((index) => kept[index])) for (const index of anchored) kept[index] = true;
    if (!kept.some(Boolean)) kept[0] = true;
    return kept;
  });
}

/** The kept text, and for each of its pieces where it sits in the file. */
function keptText(
  text: string,
  documents: DocumentSpan[],
  kept: boolean[][],
): { text: string; pieces: { from: number; to: number; at: number }[] } {
  const pieces: { from: number; to: number; at: number }[] = [];
  let length = 0;
  const add = (from: number, to: number): void => {
    if (to <= from) return;
    const last = pieces[pieces.length - 1];
    if (last && last.to === from) last.to = to;
    else pieces.push({ from, to, at: 0 });
  };
  documents.forEach((document, index) => {
    if (!document.entries) return add(document.start, document.end);
    add(document.start, document.entries[0]!.start);
    document.entries.forEach((entry, entryIndex) => {
      if (kept[index]![entryIndex]) add(entry.start, entry.end);
    });
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
  if (kept.every((flags, index) => !documents[index]!.entries || flags.every(Boolean))) return undefined;
  const slice = keptText(text, documents, kept);
  const parsed = parseAllDocuments(slice.text, YAML_PARSE_OPTIONS);
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
  for (const [index, document] of documents.entries()) {
    const old = partial.documents[index]!;
    if ((document.entries === undefined) !== (old.entries === undefined))
      return { why: "the edit changed the layout of a document" };
    if (!document.entries || !old.entries) continue;
    if (document.entries.length !== old.entries.length)
      return { why: "the edit changed the top-level keys of a document" };
    for (const [entryIndex, entry] of document.entries.entries()) {
      const was = old.entries[entryIndex]!;
      if (entry.key !== was.key) return { why: "the edit changed the top-level keys of a document" };
      if (partial.kept[index]![entryIndex]) continue;
      if (after.slice(entry.start, entry.end) !== before.slice(was.start, was.end))
        return { why: `the edit reached the untouched top-level key ${JSON.stringify(entry.key)}` };
    }
  }
  const parsed = parseAllDocuments(keptText(after, documents, partial.kept).text, YAML_PARSE_OPTIONS);
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
