import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { UserError } from "../../../src/core/errors.js";
import { currentImage, findReferences } from "../../../src/core/targets/index.js";

const IMAGE = "ghcr.io/acme/shop";
const fixture = (name: string): string =>
  readFileSync(fileURLToPath(new URL(`../../fixtures/edit/${name}/input.yaml`, import.meta.url)), "utf8");

/** What each reference's range holds in the file, quotes and all. */
const written = (text: string, options?: { fileName?: string }): string[] =>
  findReferences(text, IMAGE, options).map((reference) => text.slice(reference.range[0], reference.range[1]));

describe("Argo CD sources: the running view", () => {
  it("reads kustomize.images strings, keeping name= out of the running version", () => {
    const text = fixture("argocd-app-kustomize-images-override");
    expect(currentImage(text, IMAGE)).toEqual({
      tag: "1.7.0",
      digest: `sha256:${"b".repeat(64)}`,
      line: 11,
    });
    expect(written(text)).toEqual([`"shop=ghcr.io/acme/shop:1.7.0@sha256:${"b".repeat(64)}"`]);
    expect(written(text.replace("shop=ghcr.io/acme/shop", "shop=ghcr.io/acme/else"))).toEqual([]);
  });

  it("reads helm.parameters blocks by their repository parameter", () => {
    const text = fixture("argocd-app-helm-parameters");
    expect(currentImage(text, IMAGE)).toEqual({ tag: "1.7.0", line: 19 });
    expect(findReferences(text, IMAGE).map((reference) => [reference.field, reference.line])).toEqual([
      ["repository", 19],
      ["tag", 21],
    ]);
    expect(findReferences(text, "ghcr.io/acme/other")).toEqual([]);
  });

  it("reads helm.valuesObject and the YAML of a helm.values string at their offsets in the file", () => {
    expect(currentImage(fixture("argocd-app-helm-values-object"), IMAGE)).toEqual({ tag: "1.7.0", line: 15 });
    const text = fixture("argocd-app-helm-values-string");
    expect(currentImage(text, IMAGE)).toEqual({ tag: "1.7.0", line: 19 });
    expect(
      findReferences(text, IMAGE).map((reference) => [
        reference.field,
        reference.line,
        reference.column,
        text.slice(reference.range[0], reference.range[1]),
      ]),
    ).toEqual([
      ["repository", 19, 23, "ghcr.io/acme/shop"],
      ["tag", 20, 16, '"1.7.0"'],
      ["image", 22, 18, "ghcr.io/acme/shop:1.7.0"],
    ]);
    const crlf = fixture("argocd-app-helm-values-string-crlf");
    expect(written(crlf)).toEqual(["ghcr.io/acme/shop", '"1.7.0"', "ghcr.io/acme/shop:1.7.0"]);
  });

  it("reads every source of an ApplicationSet template and a multi-source Application", () => {
    expect(written(fixture("argocd-applicationset-templates"))).toEqual([
      "ghcr.io/acme/shop:1.7.0",
      "ghcr.io/acme/shop",
      "'1.7.0'",
      "ghcr.io/acme/shop",
      "1.7.0",
      "ghcr.io/acme/shop",
      "1.7.0",
    ]);
    expect(currentImage(fixture("argocd-app-multi-source"), IMAGE)?.tag).toBe("1.7.0");
  });

  it("reads .argocd-source files by their name only", () => {
    const kustomize = fixture("argocd-source-kustomize");
    expect(currentImage(kustomize, IMAGE, { fileName: "app/.argocd-source-shop.yaml" })?.tag).toBe("1.7.0");
    expect(currentImage(kustomize, IMAGE, { fileName: "app/values.yaml" })).toBeUndefined();
    const helm = fixture("argocd-source-helm");
    expect(currentImage(helm, IMAGE, { fileName: ".argocd-source.yaml" })).toEqual({ tag: "1.7.0", line: 4 });
  });

  it("takes configured Helm key paths as parameter names", () => {
    const text =
      "helm:\n  parameters:\n  - name: app.version\n    value: 1.7.0\n  - name: other.version\n    value: 2.0.0\n";
    expect(
      currentImage(text, IMAGE, { fileName: ".argocd-source-shop.yaml", helm: [{ tag: "app.version" }] }),
    ).toEqual({ tag: "1.7.0", line: 4 });
  });

  it("refuses, with the reason, a helm.values string it cannot splice", () => {
    const folded = fixture("argocd-app-helm-values-folded-refused");
    expect(() => currentImage(folded, IMAGE)).toThrow(UserError);
    expect(() => currentImage(folded, IMAGE)).toThrow("folded block");
    // A values string that does not hold the image is no one's business.
    expect(currentImage(folded, "ghcr.io/acme/other")).toBeUndefined();
  });
});
