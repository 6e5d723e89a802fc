import { describe, expect, it } from "vitest";
import { UserError } from "../../../src/core/errors.js";
import { currentImage, findReferences } from "../../../src/core/targets/index.js";
import { parseMarker } from "../../../src/core/targets/marker.js";

const DIGEST = `sha256:${"c".repeat(64)}`;

describe("findReferences", () => {
  it("returns each scalar's exact range, line and column", () => {
    const text = "images:\n  - name: ghcr.io/acme/shop\n    newTag: '1.7.0' # c\n";
    const references = findReferences(text, "ghcr.io/acme/shop", {
      fileName: "overlays/prod/kustomization.yaml",
    });
    expect(
      references.map((reference) => [reference.field, reference.line, reference.column, reference.value]),
    ).toEqual([
      ["name", 2, 11, "ghcr.io/acme/shop"],
      ["tag", 3, 13, "1.7.0"],
    ]);
    for (const reference of references) {
      expect(text.slice(reference.range[0], reference.range[1]).replaceAll("'", "")).toBe(reference.value);
    }
  });

  it("matches Docker Hub names however they are spelled", () => {
    const text =
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - {name: a, image: nginx:1.25}\n  - {name: b, image: index.docker.io/library/nginx:1.25}\n  - {name: c, image: nginxinc/nginx:1.25}\n";
    expect(findReferences(text, "docker.io/library/nginx").map((reference) => reference.line)).toEqual([
      5, 6,
    ]);
  });

  it("ignores image strings that are templates, not references", () => {
    const text =
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: a\n    image: '{{ .Values.image }}'\n";
    expect(findReferences(text, "ghcr.io/acme/shop")).toEqual([]);
  });

  it("reads a Helm tag as written, not as the number YAML makes of it", () => {
    const [tag] = findReferences(
      "image:\n  repository: ghcr.io/acme/shop\n  tag: 1.20\n",
      "ghcr.io/acme/shop",
    ).filter((reference) => reference.field === "tag");
    expect(tag?.value).toBe("1.20");
  });

  it("finds marked scalars only for the configured marker name", () => {
    const text = "a: ghcr.io/acme/shop:1.0 # ferry: shop\nb: 1.0 # ferry: other\n";
    expect(
      findReferences(text, "ghcr.io/acme/shop", { markerName: "shop" }).map((reference) => reference.line),
    ).toEqual([1]);
    expect(findReferences(text, "ghcr.io/acme/shop")).toEqual([]);
  });

  it("refuses an alias bomb instead of expanding it", () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let level = 1; level < 9; level++) {
      const previous = String.fromCharCode(96 + level);
      const name = String.fromCharCode(97 + level);
      levels.push(`${name}: &${name} [${Array(10).fill(`*${previous}`).join(", ")}]`);
    }
    expect(() => findReferences(`${levels.join("\n")}\n`, "ghcr.io/acme/shop")).toThrow(UserError);
  });

  it("reports a YAML syntax error as a UserError with its position", () => {
    expect(() => findReferences("image:\n  tag: [unclosed\n", "ghcr.io/acme/shop")).toThrow(
      /invalid YAML at \d+:\d+/,
    );
  });
});

describe("currentImage", () => {
  it("returns tag and digest of the first reference", () => {
    const text = `images:\n- name: ghcr.io/acme/shop\n  newTag: 1.7.0\n  digest: ${DIGEST}\n`;
    expect(currentImage(text, "ghcr.io/acme/shop", { fileName: "kustomization.yaml" })).toEqual({
      tag: "1.7.0",
      digest: DIGEST,
      line: 2,
    });
  });

  it("returns undefined when the image is not referenced", () => {
    expect(
      currentImage("image:\n  repository: ghcr.io/acme/cart\n  tag: 1.0.0\n", "ghcr.io/acme/shop"),
    ).toBeUndefined();
  });

  it("treats Helm's empty digest as unset", () => {
    expect(
      currentImage(
        'image:\n  registry: docker.io\n  repository: bitnami/nginx\n  tag: 1.29.1\n  digest: ""\n',
        "bitnami/nginx",
      ),
    ).toEqual({ tag: "1.29.1", line: 2 });
  });

  it("refuses references that disagree", () => {
    const text =
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - {name: a, image: ghcr.io/acme/shop:1.7.0}\n  - {name: b, image: ghcr.io/acme/shop:1.6.0}\n";
    expect(() => currentImage(text, "ghcr.io/acme/shop")).toThrow(/tag 1.7.0 on line 5 but 1.6.0 on line 6/);
  });
});

describe("parseMarker", () => {
  it.each([
    ["# ferry: shop", { style: "ferry", name: "shop" }],
    ["# ferry: shop:tag", { style: "ferry", name: "shop", part: "tag" }],
    ['# {"$imagepolicy": "flux-system:podinfo"}', { style: "flux", name: "flux-system:podinfo" }],
    [
      '# {"$imagepolicy": "flux-system:podinfo:digest"}',
      { style: "flux", name: "flux-system:podinfo", part: "digest" },
    ],
  ])("reads %s", (comment, marker) => {
    expect(parseMarker(comment)).toEqual(marker);
  });

  it.each([
    "# just a comment",
    '# {"$imagepolicy": "no-namespace"}',
    '# {"$imagepolicy": "a:b:version"}',
    "# {not json $imagepolicy}",
  ])("ignores %s", (comment) => {
    expect(parseMarker(comment)).toBeUndefined();
  });
});
