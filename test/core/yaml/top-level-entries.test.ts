import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { UserError } from "../../../src/core/errors.js";
import {
  findReferences,
  findTargets,
  parseForImage,
  type FindOptions,
} from "../../../src/core/targets/index.js";
import { toReferences } from "../../../src/core/targets/target.js";
import { parseKept, reparseKept, topLevelLayout } from "../../../src/core/yaml/top-level-entries.js";
import { updateImage, type ImageUpdate } from "../../../src/core/yaml-edit/update-image.js";
import { generateValues } from "../../bench/edit.js";
import { CORPUS_CASES } from "../../support/corpus-cases.js";

const FIXTURES = fileURLToPath(new URL("../../fixtures/", import.meta.url));

/** Every golden input and real-world corpus file, with the image its case edits. */
const files: [string, string, ImageUpdate, FindOptions | undefined][] = [
  ...readdirSync(join(FIXTURES, "edit")).map(
    (name): [string, string, ImageUpdate, FindOptions | undefined] => {
      const golden = JSON.parse(readFileSync(join(FIXTURES, "edit", name, "case.json"), "utf8")) as {
        update: ImageUpdate;
        options?: FindOptions;
      };
      return [
        `edit/${name}`,
        readFileSync(join(FIXTURES, "edit", name, "input.yaml"), "utf8"),
        golden.update,
        golden.options,
      ];
    },
  ),
  ...CORPUS_CASES.map((testCase): [string, string, ImageUpdate, FindOptions | undefined] => [
    `corpus/${testCase.file}`,
    readFileSync(join(FIXTURES, "corpus", testCase.file), "utf8"),
    testCase.update,
    testCase.options,
  ]),
];

const partialReferences = (text: string, image: string, options?: FindOptions) => {
  const parsed = parseForImage(text, image, options);
  return toReferences(parsed, findTargets(parsed, image, options));
};

describe("parsing only the entries that can hold the image", () => {
  it.each(files)("finds in %s exactly what the whole parse finds", (_name, text, update, options) => {
    let whole: ReturnType<typeof findReferences>;
    try {
      whole = findReferences(text, update.image, options);
    } catch (error) {
      expect(error).toBeInstanceOf(UserError);
      expect(() => partialReferences(text, update.image, options)).toThrow(UserError);
      return;
    }
    expect(partialReferences(text, update.image, options)).toEqual(whole);
    // And the images the file names without being edited: what another image's edit would find.
    for (const other of ["docker.io/library/redis", "ghcr.io/acme/proxy", "bitnami/git"])
      expect(partialReferences(text, other, options)).toEqual(findReferences(text, other, options));
  });

  it("leaves out entries that do not name the image, keeping offsets and lines of the file", () => {
    const text =
      "# values\nother:\n  image:\n    repository: ghcr.io/acme/other\n    tag: 1.0.0\nshop:\n  image:\n    repository: ghcr.io/acme/shop\n    tag: 1.7.0 # pinned\n";
    const parsed = parseForImage(text, "ghcr.io/acme/shop");
    expect(parsed.partial?.kept).toEqual([[false, true]]);
    const [, tag] = toReferences(parsed, findTargets(parsed, "ghcr.io/acme/shop"));
    expect(tag).toMatchObject({ line: 9, column: 10, value: "1.7.0" });
    expect(text.slice(tag!.range[0], tag!.range[1])).toBe("1.7.0");
  });

  it("narrows a kept block mapping to its entries that can hold the image, level by level", () => {
    const text = [
      "apps:",
      "  # the proxy",
      "  proxy:",
      "    image:",
      "      repository: ghcr.io/acme/proxy",
      "      tag: 1.0.0",
      "  shop:",
      "    replicas: 2",
      "    image:",
      "      repository: ghcr.io/acme/shop",
      "      tag: 1.7.0",
      "    resources:",
      "      limits: {cpu: 100m}",
      "    args:",
      "    - --port=80",
      "",
    ].join("\n");
    const parsed = parseForImage(text, "ghcr.io/acme/shop");
    expect(parsed.partial?.kept).toEqual([[[false, [false, true, false, false]]]]);
    const references = toReferences(parsed, findTargets(parsed, "ghcr.io/acme/shop"));
    expect(references).toEqual(findReferences(text, "ghcr.io/acme/shop"));
    expect(references.map((reference) => [reference.line, reference.value])).toEqual([
      [10, "ghcr.io/acme/shop"],
      [11, "1.7.0"],
    ]);
    const edited = updateImage(text, { image: "ghcr.io/acme/shop", tag: "1.8.0", pin: "tag" });
    expect(edited.text).toBe(text.replace("tag: 1.7.0", "tag: 1.8.0"));
    expect(reparseKept(text, parsed.partial!, text.replace("replicas: 2", "replicas: 3"))).toEqual({
      why: 'the edit reached the untouched key "replicas"',
    });
    expect(reparseKept(text, parsed.partial!, text.replace("  shop:", "  shop: # x"))).toEqual({
      why: 'the edit reached the key line of "shop"',
    });
  });

  it("finds in a large file nested under one key exactly what the whole parse finds, for every image in it", () => {
    const text = `components:\n${generateValues(600).replace(/^(?=.)/gm, "  ")}`;
    for (const image of ["ghcr.io/acme/shop", "ghcr.io/acme/component-7", "ghcr.io/acme/component-42"]) {
      const parsed = parseForImage(text, image);
      expect(parsed.partial).toBeDefined();
      expect(toReferences(parsed, findTargets(parsed, image))).toEqual(findReferences(text, image));
    }
  });

  it("keeps every entry with an anchor or alias once a kept entry has one", () => {
    const text =
      "defaults: &defaults\n  repository: ghcr.io/acme/shop\n  tag: 1.7.0\nunrelated: 1\nweb:\n  image: *defaults\n";
    expect(parseForImage(text, "ghcr.io/acme/shop").partial?.kept).toEqual([[true, false, true]]);
  });

  it("reads comments before the first --- as part of that document, and sequences at column 0 as part of their key", () => {
    const layout = topLevelLayout(
      "# yaml-language-server: $schema=x\n---\nimages:\n- name: a\n  newTag: b\nresources:\n- deployment.yaml\n---\nkind: Service\n",
    );
    expect(layout?.map((document) => document.entries?.map((entry) => entry.key))).toEqual([
      ["images", "resources"],
      ["kind"],
    ]);
  });

  it("parses the whole file when the layout is unusual: directives, a root sequence, a JSON document, duplicated keys", () => {
    const rule = { keys: new Set<string>(), needles: ["shop"] };
    expect(parseKept("%YAML 1.2\n---\na: 1\nshop: 2\n", rule)).toBeUndefined();
    expect(parseKept("- a: 1\n- shop: 2\n", rule)).toBeUndefined();
    expect(parseKept('{"a": 1, "shop": 2}\n', rule)).toBeUndefined();
    expect(parseKept("a: 1\nshop: 2\na: 3\n", rule)).toBeUndefined();
    expect(parseKept("a: 1\rshop: 2\n", rule)).toBeUndefined();
  });

  it("reports a syntax error in a kept entry at its place in the file", () => {
    const text = "other: 1\nshop:\n  image:\n    repository: ghcr.io/acme/shop\n    tag: [1.7.0\n";
    expect(() => updateImage(text, { image: "ghcr.io/acme/shop", tag: "1.8.0", pin: "tag" })).toThrow(
      /invalid YAML at [56]:/,
    );
  });

  it("refuses an edited text whose left-out entries moved or changed", () => {
    const text = "other: 1\nshop:\n  image:\n    repository: ghcr.io/acme/shop\n    tag: 1.7.0\n";
    const parsed = parseForImage(text, "ghcr.io/acme/shop");
    expect(parsed.partial).toBeDefined();
    expect(reparseKept(text, parsed.partial!, text.replace("other: 1", "other: 2"))).toEqual({
      why: 'the edit reached the untouched key "other"',
    });
    expect(reparseKept(text, parsed.partial!, `${text}extra: 1\n`)).toEqual({
      why: "the edit changed the keys of a map",
    });
    expect(reparseKept(text, parsed.partial!, text.replace("tag: 1.7.0", "tag: 1.8.0"))).toHaveProperty(
      "documents",
    );
  });

  it("adds a key to a map through the whole parse", () => {
    const text = "other: 1\nrepository: ghcr.io/acme/shop\ndigest: ''\n";
    const result = updateImage(text, { image: "ghcr.io/acme/shop", tag: "1.8.0", pin: "tag" });
    expect(result.text).toBe(`${text}tag: 1.8.0\n`);
  });
});
