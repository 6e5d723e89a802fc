import { parseAllDocuments, parseDocument } from "yaml";
import { describe, expect, it } from "vitest";
import {
  parseAllDocumentsUnique,
  parseDocumentUnique,
  parseUnique,
} from "../../../src/core/yaml/unique-keys.js";

/** The errors as a caller reads them: code, offset and first line of the message. */
const errorsOf = (documents: { errors: { code: string; pos: [number, number]; message: string }[] }[]) =>
  documents.map((document) =>
    document.errors.map((error) => `${error.code}@${error.pos[0]}: ${error.message.split("\n")[0]}`),
  );

// Each is parsed by the library's own (quadratic) check and by ours: the same errors, same places.
const CASES: Record<string, string> = {
  "block map": "a: 1\nb: 2\na: 3\n",
  "nested block map": "top:\n  x: 1\n  y: 2\n  x: 3\nother: {}\n",
  "flow map": "m: {a: 1, b: 2, a: 3}\n",
  "three of one key": "k: 1\nk: 2\nk: 3\n",
  "numbers equal by value": "1: a\n1.0: b\n0x1: c\n",
  "a quoted number is a string": "1: a\n'1': b\n",
  "null keys": "? : a\n? : b\n",
  "true and a quoted true": "true: a\n'true': b\ntrue: c\n",
  "NaN is never equal to itself": ".nan: a\n.nan: b\n",
  "anchored key": "&k a: 1\na: 2\n",
  "merge keys": "base: &b {x: 1}\nm:\n  <<: *b\n  <<: *b\n",
  "collection keys compare by identity": "? [a]\n: 1\n? [a]\n: 2\n",
  "several documents": "a: 1\na: 2\n---\nb: 1\n---\nc: 1\nc: 2\n",
  "a syntax error after a duplicate": "a: 1\na: 2\nb: [\n",
  "a syntax error before a duplicate": "a: [\nb: 1\nb: 2\n",
  "sequences of maps": "- a: 1\n  a: 2\n- a: 1\n",
  "no duplicates": "a: 1\nb:\n  a: 1\nc: [a, a]\n",
};

describe("duplicate keys refused in linear time", () => {
  for (const [name, text] of Object.entries(CASES)) {
    it(`reports what uniqueKeys: true reports: ${name}`, () => {
      const library = parseAllDocuments(text, { prettyErrors: false, uniqueKeys: true });
      const ours = parseAllDocumentsUnique(text, { prettyErrors: false });
      expect(errorsOf(ours)).toEqual(errorsOf(library));
      expect(errorsOf([parseDocumentUnique(text, { prettyErrors: false })])).toEqual(
        errorsOf([parseDocument(text, { prettyErrors: false, uniqueKeys: true })]),
      );
    });
  }

  it("finds a duplicate among 100,000 keys, as the last key", () => {
    const keys = Array.from({ length: 100_000 }, (_, index) => `key${index}: ${index}`);
    const text = `${keys.join("\n")}\nkey0: again\n`;
    const [document] = parseAllDocumentsUnique(text);
    expect(document!.errors.map((error) => [error.code, error.pos[0]])).toEqual([
      ["DUPLICATE_KEY", text.lastIndexOf("key0:")],
    ]);
  });

  it("parseUnique throws the first error, like yaml.parse, and returns the data otherwise", () => {
    expect(() => parseUnique("a: 1\na: 2\n")).toThrow("Map keys must be unique");
    expect(parseUnique("a: [1, 2]\n")).toEqual({ a: [1, 2] });
    expect(() => parseUnique("a: &x [1]\nb: *x\n", { maxAliasCount: 0 })).toThrow();
  });
});
