import { describe, expect, it } from "vitest";
import { DEFAULT_RENDER_LIMITS, parseManifests, RenderBudget } from "../../src/reconciler/parse-manifests.js";

const budget = (limits: Partial<typeof DEFAULT_RENDER_LIMITS> = {}) =>
  new RenderBudget({ ...DEFAULT_RENDER_LIMITS, ...limits });

describe("parseManifests", () => {
  it("reads every document of a multi-document file and skips empty ones", () => {
    const text =
      "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n";
    const objects = parseManifests(text, "app.yaml", budget());
    expect(objects.map(({ object }) => `${object.kind}/${object.metadata.name}`)).toEqual([
      "ConfigMap/a",
      "Service/b",
    ]);
  });

  it("unwraps a kind: List", () => {
    const text = JSON.stringify({
      apiVersion: "v1",
      kind: "List",
      items: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x" } }],
    });
    expect(parseManifests(text, "list.json", budget()).map(({ object }) => object.metadata.name)).toEqual([
      "x",
    ]);
  });

  it("rejects a document without metadata.name, naming the file and document", () => {
    const text =
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {}\n";
    expect(() => parseManifests(text, "app.yaml", budget())).toThrow(
      /app\.yaml \(document 2\): metadata\.name is missing/,
    );
  });

  it("rejects a document without apiVersion or kind", () => {
    expect(() => parseManifests("kind: ConfigMap\nmetadata: {name: a}\n", "a.yaml", budget())).toThrow(
      /apiVersion is missing/,
    );
    expect(() => parseManifests("apiVersion: v1\nmetadata: {name: a}\n", "a.yaml", budget())).toThrow(
      /kind is missing/,
    );
  });

  it("rejects a scalar document", () => {
    expect(() => parseManifests("just text\n", "a.yaml", budget())).toThrow(/must be a mapping/);
  });

  it("rejects invalid YAML with a clear error", () => {
    expect(() => parseManifests("apiVersion: v1\nkind: [unclosed\n", "bad.yaml", budget())).toThrow(
      /bad\.yaml/,
    );
  });

  it("rejects a billion-laughs alias bomb", () => {
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let level = 1; level < 9; level++) {
      const previous = String.fromCharCode(96 + level);
      const name = String.fromCharCode(97 + level);
      lines.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(",")}]`);
    }
    const bomb = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n${lines.map((line) => `  ${line}`).join("\n")}\n`;
    expect(() => parseManifests(bomb, "bomb.yaml", budget())).toThrow(/alias/i);
  });

  it("rejects more documents than the limit allows across files", () => {
    const shared = budget({ maxDocuments: 2 });
    parseManifests("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", "a.yaml", shared);
    parseManifests("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n", "b.yaml", shared);
    expect(() =>
      parseManifests("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "c.yaml", shared),
    ).toThrow(/more than 2 documents/);
  });

  it("rejects text over the size limit", () => {
    const text = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {blob: "${"x".repeat(2000)}"}\n`;
    expect(() => parseManifests(text, "big.yaml", budget({ maxBytes: 1000 }))).toThrow(/exceed 1000 bytes/);
  });
});
