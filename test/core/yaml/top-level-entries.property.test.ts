import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { UserError } from "../../../src/core/errors.js";
import { findReferences, findTargets, parseForImage } from "../../../src/core/targets/index.js";
import { toReferences } from "../../../src/core/targets/target.js";
import { updateImage } from "../../../src/core/yaml-edit/update-image.js";

/**
 * For generated block-style YAML (nested maps, sequences written at their key's column or
 * indented, block scalars, flow maps, quoted strings, comments at any column including 0, anchors
 * and aliases, image blocks, whole image strings, markers), the partial parse finds exactly what
 * the whole parse finds, and after an edit the same references are there (their values are pinned
 * down by the image blocks property and the goldens).
 */

type Value =
  | { kind: "scalar"; text: string }
  | { kind: "block-scalar"; lines: string[] }
  | { kind: "flow"; text: string }
  | { kind: "map"; entries: [string, Value][] }
  | { kind: "seq"; items: Value[]; compact: boolean };

const word = fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/);
const scalar = fc.oneof(
  word,
  fc.constantFrom(
    "ghcr.io/acme/shop:1.7.0",
    "ghcr.io/acme/proxy:1.0.0",
    "'ghcr.io/acme/shop:1.7.0'",
    '"shop"',
    "1.20",
    "~",
    "&a ghcr.io/acme/shop:1.7.0",
    "*a",
    "1.7.0 # ferry: shop",
    "x # a comment",
  ),
);

const value: fc.Arbitrary<Value> = fc.letrec<{ value: Value }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar.map((text): Value => ({ kind: "scalar", text })),
    fc.array(word, { minLength: 1, maxLength: 3 }).map((lines): Value => ({ kind: "block-scalar", lines })),
    fc
      .constantFrom("{a: 1, b: shop}", "[x, ghcr.io/acme/shop:1.7.0]", "{}")
      .map((text): Value => ({ kind: "flow", text })),
    fc
      .tuple(fc.constantFrom("ghcr.io/acme/shop", "ghcr.io/acme/proxy"), fc.constantFrom("1.7.0", '"1.7.0"'))
      .map(([repository, tag]): Value => ({
        kind: "map",
        entries: [
          ["repository", { kind: "scalar", text: repository }],
          ["tag", { kind: "scalar", text: tag }],
        ],
      })),
    fc
      .uniqueArray(
        fc.tuple(fc.oneof(word, fc.constantFrom("image", "shop", "spec", "values")), tie("value")),
        {
          minLength: 1,
          maxLength: 4,
          selector: ([key]) => key,
        },
      )
      .map((entries): Value => ({ kind: "map", entries })),
    fc
      .tuple(fc.array(tie("value"), { minLength: 1, maxLength: 3 }), fc.boolean())
      .map(([items, compact]): Value => ({ kind: "seq", items, compact })),
  ),
})).value;

const comment = fc.option(fc.tuple(fc.constantFrom(0, 1, 2), fc.constantFrom("# note", "# shop", "#")), {
  nil: undefined,
});

/** Block-style text for a map's entries at `indent`, with optional comment lines in between. */
function renderEntries(entries: [string, Value][], indent: number, notes: (string | undefined)[]): string[] {
  const pad = " ".repeat(indent);
  const lines: string[] = [];
  entries.forEach(([key, item], index) => {
    const note = notes[index % Math.max(notes.length, 1)];
    if (note !== undefined) lines.push(note);
    lines.push(...renderValue(`${pad}${key}:`, item, indent, notes));
  });
  return lines;
}

function renderValue(head: string, item: Value, indent: number, notes: (string | undefined)[]): string[] {
  switch (item.kind) {
    case "scalar":
    case "flow":
      return [`${head} ${item.text}`];
    case "block-scalar":
      return [`${head} |`, ...item.lines.map((line) => `${" ".repeat(indent + 2)}${line}`)];
    case "map":
      return [head, ...renderEntries(item.entries, indent + 2, notes)];
    case "seq": {
      const at = item.compact ? indent : indent + 2;
      return [
        head,
        ...item.items.flatMap((entry) => {
          const lines = renderValue(`${" ".repeat(at)}- x:`, entry, at + 2, notes);
          return lines;
        }),
      ];
    }
  }
}

const documentShape = fc.record({
  entries: fc.uniqueArray(fc.tuple(fc.oneof(word, fc.constantFrom("image", "shop", "kind")), value), {
    minLength: 1,
    maxLength: 5,
    selector: ([key]) => key,
  }),
  notes: fc.array(comment, { maxLength: 3 }),
  secondDocument: fc.boolean(),
});

function render(shape: typeof documentShape extends fc.Arbitrary<infer T> ? T : never): string {
  const notes = shape.notes.map((note) => (note ? `${" ".repeat(note[0])}${note[1]}` : undefined));
  const lines = renderEntries(shape.entries, 0, notes);
  if (shape.secondDocument) lines.push("---", ...renderEntries(shape.entries.slice().reverse(), 0, []));
  return `${lines.join("\n")}\n`;
}

const options = { markerName: "shop" };

describe("the partial parse on generated YAML", () => {
  it("finds exactly what the whole parse finds, and the edit leaves the same references", () => {
    fc.assert(
      fc.property(documentShape, (shape) => {
        const text = render(shape);
        let whole: ReturnType<typeof findReferences>;
        try {
          whole = findReferences(text, "ghcr.io/acme/shop", options);
        } catch (error) {
          // A file the whole parse refuses (invalid YAML, an unresolved alias) may still be edited
          // when the fault sits in an entry that cannot hold the image: nothing to compare here.
          expect(error).toBeInstanceOf(UserError);
          return;
        }
        const parsed = parseForImage(text, "ghcr.io/acme/shop", options);
        expect(toReferences(parsed, findTargets(parsed, "ghcr.io/acme/shop", options))).toEqual(whole);
        let edited: string | undefined;
        try {
          edited = updateImage(text, { image: "ghcr.io/acme/shop", tag: "1.8.0", pin: "tag" }, options).text;
        } catch (error) {
          expect(error).toBeInstanceOf(UserError);
          return;
        }
        // Exactly the found tag-holding scalars changed, each to the new value.
        const after = findReferences(edited, "ghcr.io/acme/shop", options);
        expect(after.map((reference) => reference.field)).toEqual(whole.map((reference) => reference.field));
      }),
      { seed: 20261201, numRuns: 500 },
    );
  });
});
