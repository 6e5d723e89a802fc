/**
 * The shapes shared by the YAML modules (`yaml-tree.ts` parses and walks, `top-level-entries.ts`
 * parses only what can matter): a leaf, so that neither imports the other for them.
 */
import type { Document, LineCounter } from "yaml";

/**
 * The parsed form every target finder works on: all documents of a file with exact source
 * ranges (offsets are JavaScript string indices into `text`, a BOM included), never re-serialized.
 */
export interface ParsedYaml {
  text: string;
  documents: Document.Parsed[];
  lineCounter: LineCounter;
  /** Set when only some top-level entries were parsed (see top-level-entries.ts). */
  partial?: PartialParse;
}

/** Files bigger than this are refused, not parsed (docs/reliability.md row 29). */
export const MAX_YAML_CHARS = 8 * 1024 * 1024;
/**
 * How many nodes a walk may visit with aliases expanded. A "billion laughs" file expands
 * exponentially; it is refused once the walk passes this budget.
 */
export const MAX_EXPANDED_NODES = 200_000;

export type PathKey = string | number;

/**
 * A duplicated key is ambiguous (which one does Kubernetes take?) so it is refused: every parse
 * goes through `unique-keys.ts`, which does that in linear time.
 */
export const YAML_PARSE_OPTIONS = { prettyErrors: false, keepSourceTokens: false } as const;

/** One top-level `key: …` entry: from its key line to the next entry's (comments included). */
export interface TopLevelEntry {
  start: number;
  end: number;
  key: string;
  /** Column of the key: 0 at the top level. */
  indent: number;
  /** The entries of the block mapping it holds, once narrowed (see `Keep`). */
  children?: TopLevelEntry[];
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
  /** Whether kept entries holding block mappings are narrowed to their kept entries, level by level. */
  narrow?: boolean;
}

/** The parse of the kept text and how to redo it on an edited text. */
export interface PartialParse {
  documents: DocumentSpan[];
  /** Per document, per entry: what of it was parsed. */
  kept: Keep[][];
}

/**
 * What is parsed of one entry: all of it (`true`), none (`false`), or its key line and, per child
 * entry of the block mapping it holds, the same again.
 */
export type Keep = boolean | Keep[];
