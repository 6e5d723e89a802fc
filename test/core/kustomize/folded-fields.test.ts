/**
 * Kustomize matches a kustomization's keys case-insensitively (Go's encoding/json): every field
 * that names a file, URL or generator is found in every spelling, and two spellings of one field
 * are refused.
 */
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { foldKey } from "../../../src/core/kustomize/folded-fields.js";
import {
  kustomizationReferences,
  pluginConfigReferences,
  remoteReferencesIn,
} from "../../../src/core/kustomize/kustomization-references.js";

const URL = "http://127.0.0.1:8080/x.yaml";

/** lower, Capitalised, UPPER, mIxEd, and the two non-ASCII letters Go folds into ASCII. */
function spellings(name: string): string[] {
  const mixed = [...name]
    .map((char, index) => (index % 2 ? char.toUpperCase() : char.toLowerCase()))
    .join("");
  const unicode = name.replace(/s/, "\u017f").replace(/k/, "\u212a");
  return [name, name[0]!.toUpperCase() + name.slice(1), name.toUpperCase(), mixed, unicode];
}

/** A kustomization naming `URL` through `field`, with every key on the way spelled by `spell`. */
const SHAPES: Record<string, (spell: (key: string) => string) => unknown> = {
  resources: (s) => ({ [s("resources")]: [URL] }),
  bases: (s) => ({ [s("bases")]: [URL] }),
  components: (s) => ({ [s("components")]: [URL] }),
  generators: (s) => ({ [s("generators")]: [URL] }),
  transformers: (s) => ({ [s("transformers")]: [URL] }),
  validators: (s) => ({ [s("validators")]: [URL] }),
  crds: (s) => ({ [s("crds")]: [URL] }),
  configurations: (s) => ({ [s("configurations")]: [URL] }),
  patchesStrategicMerge: (s) => ({ [s("patchesStrategicMerge")]: [URL] }),
  "patches[0].path": (s) => ({ [s("patches")]: [{ [s("path")]: URL }] }),
  "patchesJson6902[0].path": (s) => ({ [s("patchesJson6902")]: [{ [s("path")]: URL }] }),
  "replacements[0].path": (s) => ({ [s("replacements")]: [{ [s("path")]: URL }] }),
  "configMapGenerator[0].files": (s) => ({ [s("configMapGenerator")]: [{ [s("files")]: [`k=${URL}`] }] }),
  "secretGenerator[0].envs": (s) => ({ [s("secretGenerator")]: [{ [s("envs")]: [URL] }] }),
  "configMapGenerator[0].envs": (s) => ({ [s("configMapGenerator")]: [{ [s("env")]: URL }] }),
  "openapi.path": (s) => ({ [s("openapi")]: { [s("path")]: URL } }),
  "helmCharts[0].repo": (s) => ({ [s("helmCharts")]: [{ name: "x", [s("repo")]: URL }] }),
  "helmCharts[0].valuesFile": (s) => ({ [s("helmCharts")]: [{ [s("valuesFile")]: URL }] }),
  "helmCharts[0].additionalValuesFiles": (s) => ({
    [s("helmCharts")]: [{ [s("additionalValuesFiles")]: [URL] }],
  }),
  "helmChartInflationGenerator[0].chartRepoUrl": (s) => ({
    [s("helmChartInflationGenerator")]: [{ [s("chartRepoUrl")]: URL }],
  }),
  "helmGlobals.chartHome": (s) => ({ [s("helmGlobals")]: { [s("chartHome")]: URL } }),
  "helmGlobals.configHome": (s) => ({ [s("helmGlobals")]: { [s("configHome")]: URL } }),
};

describe("kustomization keys, read as kustomize reads them", () => {
  it("folds keys as Go's encoding/json does", () => {
    expect(foldKey("ReSources")).toBe("resources");
    expect(foldKey("re\u017fources")).toBe("resources");
    expect(foldKey("\u212aind")).toBe("kind");
    expect(foldKey("Résources")).not.toBe("resources");
  });

  for (const [field, shape] of Object.entries(SHAPES)) {
    it(`finds ${field} in every spelling`, () => {
      for (let variant = 0; variant < 5; variant++) {
        const spell = (key: string) => spellings(key)[variant]!;
        const found = kustomizationReferences(shape(spell));
        expect(found, `${field} spelled ${spell(field.split(/[.[]/)[0]!)}`).toContainEqual(
          expect.objectContaining({ field, value: URL, remote: true }),
        );
      }
    });
  }

  it("refuses two spellings of one field, at the top and inside an item", () => {
    expect(() => kustomizationReferences({ resources: ["a.yaml"], Resources: [URL] })).toThrow(
      /"resources" and "Resources" are the same field to kustomize; refused/,
    );
    expect(() => kustomizationReferences({ patches: [{ path: "a.yaml", PATH: URL }] })).toThrow(
      /patches\[0\]: "path" and "PATH" are the same field/,
    );
  });

  it("sees through YAML merge keys and !!binary values, as kustomize's decoder does", () => {
    const merged = parse(`base: &b\n  Resources: ["${URL}"]\n<<: *b\n`, { merge: true });
    expect(kustomizationReferences(merged)).toContainEqual(expect.objectContaining({ value: URL }));
    const binary = parse(`resources:\n  - !!binary ${Buffer.from(URL).toString("base64")}\n`);
    expect(kustomizationReferences(binary)).toContainEqual(
      expect.objectContaining({ value: URL, remote: true }),
    );
    expect(remoteReferencesIn(`other: &o {RESOURCES: ["${URL}"]}\n<<: *o\n`)).toHaveLength(1);
  });

  it("reads inline generator configurations and built-in plugin configurations by kind", () => {
    const inline = { Generators: [`kind: HelmChartInflationGenerator\nChartRepoURL: ${URL}\n`] };
    expect(kustomizationReferences(inline)).toContainEqual(
      expect.objectContaining({ field: "generators[0].chartRepoUrl", value: URL, remote: true }),
    );
    for (const config of [
      { kind: "ConfigMapGenerator", FILES: [URL] },
      { kind: "PatchTransformer", Path: URL },
      { kind: "PatchStrategicMergeTransformer", paths: [URL] },
      { kind: "ReplacementTransformer", replacements: [{ PATH: URL }] },
      { kind: "HelmChartInflationGenerator", Repo: URL },
    ])
      expect(pluginConfigReferences(config), config.kind).toContainEqual(
        expect.objectContaining({ value: URL, remote: true }),
      );
  });
});
