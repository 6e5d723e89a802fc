import { describe, expect, it } from "vitest";
import { checkReferences } from "../../../src/core/check/check-references.js";
import { loadConfig } from "../../../src/core/config/load-config.js";
import type { FerryConfig } from "../../../src/core/config/schema.js";

const CONFIG_TEXT = `images:
  shop:
    repository: ghcr.io/acme/shop
  cart:
    repository: docker.io/acme/cart
    helm:
      - repository: cart.name
        tag: cart.version
environments:
  staging:
    paths: [staging]
`;

function config(): FerryConfig {
  const loaded = loadConfig(CONFIG_TEXT);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  return loaded.config;
}

const files = (entries: Record<string, string>): Map<string, Map<string, string>> =>
  new Map([["staging", new Map(Object.entries(entries))]]);

describe("checkReferences", () => {
  it("finds nothing wrong when each image is referenced, through configured Helm keys too", () => {
    const problems = checkReferences(
      config(),
      files({
        "staging/values.yaml":
          "image:\n  repository: ghcr.io/acme/shop\n  tag: 1.0.0\ncart:\n  name: acme/cart\n  version: 2.0.0\n",
      }),
    );
    expect(problems).toEqual([]);
  });

  it("sees an image under an alias key (*app :) of an app-template HelmRelease and reads what it runs", () => {
    const problems = checkReferences(
      config(),
      files({
        "staging/shop.yaml":
          "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: &app shop\nspec:\n  values:\n    controllers:\n      *app :\n        containers:\n          app:\n            image:\n              repository: ghcr.io/acme/shop\n              tag: 1.0.0\n",
        "staging/shop-worker.yaml":
          "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: &app worker\nspec:\n  values:\n    controllers:\n      *app :\n        containers:\n          app:\n            image:\n              repository: ghcr.io/acme/shop\n              tag: 1.1.0\n",
        "staging/cart.yaml": "cart:\n  name: acme/cart\n  version: 2.0.0\n",
      }),
    );
    // Found in both files: no "not referenced", and the two running tags are compared.
    expect(problems.map((problem) => problem.message)).toEqual([
      "shop runs 1.1.0 here but 1.0.0 in staging/shop.yaml:12 (environment staging)",
    ]);
  });

  it("reports each image an environment does not reference, at the environment's paths", () => {
    const problems = checkReferences(
      config(),
      files({ "staging/values.yaml": "image:\n  repository: ghcr.io/acme/shop\n  tag: 1.0.0\n" }),
      CONFIG_TEXT,
    );
    expect(problems).toEqual([
      {
        file: ".github/ferry.yml",
        line: 11,
        column: 12,
        message:
          "image cart (docker.io/acme/cart) is not referenced in environment staging's paths (staging)",
      },
    ]);
  });

  it("accepts # ferry: markers naming the image", () => {
    const problems = checkReferences(
      config(),
      files({ "staging/values.yaml": "shop: 1.0.0 # ferry: shop:tag\ncart: 2.0.0 # ferry: cart:tag\n" }),
    );
    expect(problems).toEqual([]);
  });

  it("reports files of one environment that run different versions", () => {
    const problems = checkReferences(
      config(),
      files({
        "staging/a.yaml":
          "image:\n  repository: ghcr.io/acme/shop\n  tag: 1.0.0\ncart:\n  name: acme/cart\n  version: 2.0.0\n",
        "staging/b.yaml":
          "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: shop\n    image: ghcr.io/acme/shop:0.9.0\n",
      }),
    );
    expect(problems).toEqual([
      {
        file: "staging/b.yaml",
        line: 6,
        column: 1,
        message: "shop runs 0.9.0 here but 1.0.0 in staging/a.yaml:2 (environment staging)",
      },
    ]);
  });

  it("reports a file that is not YAML once, at the error's position", () => {
    const problems = checkReferences(config(), files({ "staging/x.yaml": "a: 1\nb: [\n" }));
    expect(problems.filter((problem) => problem.file === "staging/x.yaml")).toHaveLength(1);
    expect(problems[problems.length - 1]).toMatchObject({
      file: "staging/x.yaml",
      message: expect.stringContaining("invalid YAML"),
    });
  });

  it("does not also call an image missing when a file of the environment could not be read (the reference may be in it)", () => {
    const problems = checkReferences(
      config(),
      files({
        "staging/x.yaml": "image: ghcr.io/acme/shop:1.0.0\nb: [\n",
        "staging/cart.yaml": "cart:\n  name: acme/cart\n  version: 2.0.0\n",
      }),
    );
    expect(problems).toEqual([
      expect.objectContaining({ file: "staging/x.yaml", message: expect.stringContaining("invalid YAML") }),
    ]);
  });
});
