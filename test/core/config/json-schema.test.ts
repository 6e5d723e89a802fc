import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { configJsonSchema } from "../../../src/core/config/schema.js";

const SCHEMA_FILE = join(import.meta.dirname, "../../../src/core/config/ferry.schema.json");

describe("the published JSON Schema", () => {
  it("is the one generated from the zod schema (run with UPDATE_SCHEMA=1 to refresh it)", () => {
    const generated = `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
    if (process.env.UPDATE_SCHEMA === "1") writeFileSync(SCHEMA_FILE, generated);
    expect(readFileSync(SCHEMA_FILE, "utf8")).toBe(generated);
  });

  it("accepts the docs/config.md example and rejects an unknown key, as the runtime validation does", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const validate = ajv.compile(JSON.parse(readFileSync(SCHEMA_FILE, "utf8")));
    const good = parse(
      `images:\n  shop: { repository: ghcr.io/acme/shop, policy: { range: "^1.0.0" } }\nenvironments:\n  staging: { paths: [overlays/staging], merge: auto }\n  prod: { paths: [overlays/prod], from: staging, soak: 30m, promoters: { permission: maintain } }\n`,
    );
    expect(validate(good)).toBe(true);
    expect(validate({ ...good, imagez: {} })).toBe(false);
    expect(validate({ images: {}, environments: { prod: { paths: [], merge: "sometimes" } } })).toBe(false);
  });
});
