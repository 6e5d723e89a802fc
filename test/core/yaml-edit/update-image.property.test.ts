import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { UserError } from "../../../src/core/errors.js";
import { isValidTag } from "../../../src/core/image-ref.js";
import { findReferences } from "../../../src/core/targets/index.js";
import { updateImage } from "../../../src/core/yaml-edit/update-image.js";

/**
 * docs/reliability.md G8: for any string, either it is a valid OCI tag and exactly the target scalar
 * changes, or nothing is written. fast-check 4 dropped `fullUnicodeString`; `string({ unit: "binary" })`
 * is its replacement (any code point, astral planes included).
 */
const anyString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,20}$/),
  fc.constantFrom(
    "1.20",
    "yes",
    "0x1F",
    "1e3",
    "null",
    "~",
    "v1\n---\nkind: ClusterRoleBinding",
    "{{ .Env.X }}",
    "${{ secrets.X }}",
    'a"b',
    "-v1",
    ".v1",
    "x".repeat(129),
  ),
);

const quoting = fc.constantFrom("plain", "single", "double");
const eol = fc.constantFrom("\n", "\r\n");
const commentText = fc.string({ unit: "binary", maxLength: 12 }).map((text) => text.replace(/[\r\n]/g, " "));

/** A Helm values document with the shop image block among other keys, anchors and documents. */
const valuesDocument = fc.record({
  quote: quoting,
  eol,
  comment: fc.option(commentText, { nil: undefined }),
  before: fc.array(
    fc.tuple(
      fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,8}$/),
      fc.oneof(fc.integer(), fc.stringMatching(/^[a-z0-9 ]{0,10}$/), fc.boolean()),
    ),
    { maxLength: 4 },
  ),
  bom: fc.boolean(),
  secondDocument: fc.boolean(),
  anchorElsewhere: fc.boolean(),
});

type Shape = typeof valuesDocument extends fc.Arbitrary<infer T> ? T : never;

function render(s: Shape): string {
  const tag = s.quote === "plain" ? "v1.7.0" : s.quote === "single" ? "'v1.7.0'" : '"v1.7.0"';
  const lines = [
    ...s.before.map(([key, value], index) => `k${index}${key}: ${JSON.stringify(value)}`),
    ...(s.anchorElsewhere ? ["defaults: &defaults", "  pullPolicy: IfNotPresent", "copy: *defaults"] : []),
    "image:",
    "  repository: ghcr.io/acme/shop",
    `  tag: ${tag}${s.comment !== undefined ? ` # ${s.comment}` : ""}`,
    "proxy:",
    "  image:",
    "    repository: ghcr.io/acme/proxy",
    "    tag: v1.7.0",
    ...(s.secondDocument ? ["---", "image:", "  repository: ghcr.io/acme/shop", "  tag: v1.7.0"] : []),
  ];
  return (s.bom ? "\ufeff" : "") + lines.join(s.eol) + s.eol;
}

const toJs = (text: string): unknown[] => parseAllDocuments(text).map((document) => document.toJS());

describe("updateImage for any tag string", () => {
  it("either writes exactly the shop's tag scalars (a valid tag) or nothing", () => {
    fc.assert(
      fc.property(valuesDocument, anyString, (shape, tag) => {
        const text = render(shape);
        const before = findReferences(text, "ghcr.io/acme/shop").filter(
          (reference) => reference.field === "tag",
        );
        let result: ReturnType<typeof updateImage>;
        try {
          result = updateImage(text, { image: "ghcr.io/acme/shop", tag, pin: "tag" });
        } catch (error) {
          expect(error).toBeInstanceOf(UserError);
          expect(isValidTag(tag)).toBe(false);
          return;
        }
        expect(isValidTag(tag)).toBe(true);
        // Outside the tag scalars, every character is the same.
        const after = findReferences(result.text, "ghcr.io/acme/shop").filter(
          (reference) => reference.field === "tag",
        );
        expect(after.length).toBe(before.length);
        let cursorBefore = 0;
        let cursorAfter = 0;
        before.forEach((reference, index) => {
          expect(result.text.slice(cursorAfter, after[index]!.range[0])).toBe(
            text.slice(cursorBefore, reference.range[0]),
          );
          expect(after[index]!.value).toBe(tag);
          cursorBefore = reference.range[1];
          cursorAfter = after[index]!.range[1];
        });
        expect(result.text.slice(cursorAfter)).toBe(text.slice(cursorBefore));
        // And the parsed data differs only in those tags.
        const expected = toJs(text) as Record<string, { tag: string }>[];
        for (const document of expected) {
          if (document.image) document.image.tag = tag;
        }
        expect(toJs(result.text)).toEqual(expected);
      }),
      { seed: 20240601, numRuns: 400 },
    );
  });

  it("rejects every string that is not a valid tag without returning text", () => {
    fc.assert(
      fc.property(
        anyString.filter((tag) => !isValidTag(tag)),
        (tag) => {
          expect(() =>
            updateImage("image:\n  repository: ghcr.io/acme/shop\n  tag: v1\n", {
              image: "ghcr.io/acme/shop",
              tag,
              pin: "tag",
            }),
          ).toThrow(UserError);
        },
      ),
      { seed: 7, numRuns: 300 },
    );
  });

  it("edits a manifest image string to exactly repo:tag for any valid tag", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/), quoting, (tag, quote) => {
        const q = quote === "plain" ? "" : quote === "single" ? "'" : '"';
        const text = `apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n    image: ${q}ghcr.io/acme/shop:v1${q} # keep\n`;
        const result = updateImage(text, { image: "ghcr.io/acme/shop", tag, pin: "tag" });
        const pod = toJs(result.text)[0] as { spec: { containers: { image: string }[] } };
        expect(pod.spec.containers[0]!.image).toBe(`ghcr.io/acme/shop:${tag}`);
        expect(result.text.endsWith(" # keep\n")).toBe(true);
      }),
      { seed: 11, numRuns: 300 },
    );
  });
});
