import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { UserError } from "../../../src/core/errors.js";
import { updateImage, type ImageUpdate } from "../../../src/core/yaml-edit/update-image.js";
import type { FindOptions } from "../../../src/core/targets/index.js";

/**
 * Golden edits (docs/testing.md "Golden files"): test/fixtures/edit/<case>/input.yaml → expected.yaml under
 * case.json's update. A case with `error` must throw a UserError containing it and write nothing
 * (its expected.yaml is the input, byte for byte).
 */
const FIXTURES = fileURLToPath(new URL("../../fixtures/edit/", import.meta.url));

interface GoldenCase {
  description: string;
  update: ImageUpdate;
  options?: FindOptions;
  error?: string;
}

const cases = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

// Files are read as strings without any normalisation, so a BOM and CRLF reach the editor as they are.
const read = (name: string, file: string): string => readFileSync(join(FIXTURES, name, file), "utf8");

describe("golden edits", () => {
  it("has at least 40 cases", () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  describe.each(cases)("%s", (name) => {
    const input = read(name, "input.yaml");
    const expected = read(name, "expected.yaml");
    const golden = JSON.parse(read(name, "case.json")) as GoldenCase;

    if (golden.error !== undefined) {
      it(`refuses: ${golden.description}`, () => {
        expect(() => updateImage(input, golden.update, golden.options)).toThrow(UserError);
        expect(() => updateImage(input, golden.update, golden.options)).toThrow(golden.error);
        expect(expected).toBe(input);
      });
      return;
    }

    it(golden.description, () => {
      const result = updateImage(input, golden.update, golden.options);
      expect(result.text).toBe(expected);
      expect(result.edits.length > 0).toBe(input !== expected);
    });

    it("is idempotent: editing the expected output again changes nothing", () => {
      const again = updateImage(expected, golden.update, golden.options);
      expect(again.text).toBe(expected);
      expect(again.edits).toEqual([]);
    });
  });
});
