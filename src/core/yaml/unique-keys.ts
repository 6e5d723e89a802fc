import {
  isScalar,
  parseAllDocuments,
  parseDocument,
  visit,
  YAMLParseError,
  type Document,
  type DocumentOptions,
  type EmptyStream,
  type ParseOptions,
  type SchemaOptions,
  type ToJSOptions,
} from "yaml";

/**
 * Duplicate keys refused in linear time (docs/reliability.md row 29). The `yaml` library's own
 * `uniqueKeys` check compares each new key with every key before it in its map, so a map of n keys
 * costs n²/2 comparisons: a 100,000-line values file spends a third of its parse there, and a
 * crafted file can spend far more. These parse with that check off and then look for duplicates
 * with one set per map, adding the same error the library adds ("Map keys must be unique", code
 * DUPLICATE_KEY) at the same place, so callers read `document.errors` exactly as before.
 */

type Options = ParseOptions & DocumentOptions & SchemaOptions;

/** `parseAllDocuments` with duplicate keys refused as `uniqueKeys: true` does, in linear time. */
export function parseAllDocumentsUnique(
  text: string,
  options: Options = {},
): Document.Parsed[] | EmptyStream {
  const documents = parseAllDocuments(text, { ...options, uniqueKeys: false });
  if (Array.isArray(documents)) for (const document of documents) addDuplicateKeyErrors(document);
  return documents;
}

/** `parseDocument` with duplicate keys refused as `uniqueKeys: true` does, in linear time. */
export function parseDocumentUnique(text: string, options: Options = {}): Document.Parsed {
  const document = parseDocument(text, { ...options, uniqueKeys: false });
  addDuplicateKeyErrors(document);
  return document;
}

/**
 * Adds an error for every key equal to an earlier key of the same map, equal as the library
 * compares them (scalar values by `===`), and keeps the errors in source order.
 */
export function addDuplicateKeyErrors(document: Document.Parsed): void {
  const found: YAMLParseError[] = [];
  visit(document, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        const key = pair.key;
        if (!isScalar(key)) continue;
        // NaN is never `===` itself; a Set would call two of them equal.
        if (typeof key.value === "number" && Number.isNaN(key.value)) continue;
        if (!seen.has(key.value)) {
          seen.add(key.value);
          continue;
        }
        const at = key.range?.[0] ?? 0;
        found.push(new YAMLParseError([at, at + 1], "DUPLICATE_KEY", "Map keys must be unique"));
      }
    },
  });
  if (found.length === 0) return;
  document.errors.push(...found);
  document.errors.sort((a, b) => a.pos[0] - b.pos[0]);
}

/** `yaml.parse`: one document to plain data, its first error thrown; duplicate keys refused in linear time. */
export function parseUnique(text: string, options: Options & ToJSOptions = {}): unknown {
  const document = parseDocumentUnique(text, options);
  const error = document.errors[0];
  if (error) throw error;
  return document.toJS(options);
}
