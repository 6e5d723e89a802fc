import { describe, expect, it } from "vitest";
import {
  affectedEnvironments,
  environmentInputs,
  normalizeRepoPath,
} from "../../../src/core/pr/affected-environments.js";

const environments = {
  staging: { paths: ["overlays/staging"] },
  prod: { paths: ["overlays/prod/"] },
  tools: { paths: ["tools/values.yaml"] },
};

const overlay = (base: string) => `resources:\n  - ${base}\n  - deployment.yaml\n`;

describe("affectedEnvironments", () => {
  it("names the environments whose paths hold a changed file", () => {
    expect(
      affectedEnvironments({ environments, changedFiles: ["overlays/staging/deployment.yaml"] }),
    ).toEqual(["staging"]);
    expect(affectedEnvironments({ environments, changedFiles: ["tools/values.yaml", "README.md"] })).toEqual([
      "tools",
    ]);
  });

  it("is not fooled by a folder that only shares a prefix", () => {
    expect(affectedEnvironments({ environments, changedFiles: ["overlays/staging-old/a.yaml"] })).toEqual([]);
    expect(affectedEnvironments({ environments, changedFiles: ["tools/values.yaml.bak"] })).toEqual([]);
  });

  it("follows kustomizations to the bases they load, however deep", () => {
    const kustomizations = new Map([
      ["overlays/staging/kustomization.yaml", overlay("../../base")],
      ["overlays/prod/kustomization.yaml", overlay("../shared")],
      ["overlays/shared/kustomization.yaml", "resources:\n  - ../../base\n"],
      ["base/kustomization.yaml", "resources:\n  - service.yaml\npatches:\n  - path: ../patches/p.yaml\n"],
    ]);
    expect(
      affectedEnvironments({ environments, changedFiles: ["base/service.yaml"], kustomizations }),
    ).toEqual(["staging", "prod"]);
    expect(affectedEnvironments({ environments, changedFiles: ["patches/p.yaml"], kustomizations })).toEqual([
      "staging",
      "prod",
    ]);
    expect(
      affectedEnvironments({ environments, changedFiles: ["overlays/shared/x.yaml"], kustomizations }),
    ).toEqual(["prod"]);
  });

  it("takes every environment when GitHub cut the file list", () => {
    expect(affectedEnvironments({ environments, changedFiles: [], listCut: true })).toEqual([
      "staging",
      "prod",
      "tools",
    ]);
  });
});

describe("environmentInputs", () => {
  it("drops references that leave the repository and stops on a loop", () => {
    const kustomizations = new Map([
      ["a/kustomization.yaml", "resources:\n  - ../b\n  - ../../../etc\n  - https://example.com/x.yaml\n"],
      ["b/kustomization.yaml", "resources:\n  - ../a\n"],
    ]);
    expect(environmentInputs(["a"], kustomizations)).toEqual(["a", "b"]);
  });

  it("reads nothing from an unreadable kustomization", () => {
    expect(environmentInputs(["a"], new Map([["a/kustomization.yaml", "resources: [\n"]]))).toEqual(["a"]);
  });
});

describe("normalizeRepoPath", () => {
  it("resolves dots and refuses to leave the root", () => {
    expect(normalizeRepoPath("./a/b/../c/")).toBe("a/c");
    expect(normalizeRepoPath("a/../../b")).toBeUndefined();
  });
});
