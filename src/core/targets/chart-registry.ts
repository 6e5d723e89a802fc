import { isScalar, type Document, type YAMLMap } from "yaml";
import { nodeAt, scalarText, type ParsedYaml, type PathKey } from "../yaml/yaml-tree.js";

/**
 * Chart-level default registries: values a chart's templates put in front of an image block's
 * `repository` when the block's own `registry` is empty (docs/architecture.md "Editing files"):
 * bitnami's and grafana's `global.imageRegistry`, `global.image.registry`, a `defaultRegistry` or
 * `imageRegistry` beside the block or at the top of the values. Paths are relative to the values root.
 */
const GLOBAL_DEFAULTS: PathKey[][] = [
  ["global", "imageRegistry"],
  ["global", "image", "registry"],
  ["global", "registry"],
  ["global", "defaultRegistry"],
  ["defaultRegistry"],
  ["imageRegistry"],
];
/** Keys beside the block (in the map that holds it) or inside it that name its default registry. */
const LOCAL_DEFAULTS = ["defaultRegistry", "imageRegistry"];

export type RenderedRegistry =
  /** The registry the block renders with ("" for none: the repository names the whole image). */
  | { registry: string }
  /** The chart's templates decide, and the values cannot tell which: every reading, and why. */
  | { readings: string[]; why: string };

/**
 * Which registry an image block renders with. With no chart default, the block's own `registry`.
 * With the block's registry empty and one default, that default. Otherwise (the block names a registry
 * and a default names another, which charts resolve either way round, or two defaults disagree) it
 * cannot be told from the values: every reading is returned, to be refused rather than guessed.
 */
export function renderedRegistry(
  parsed: ParsedYaml,
  document: Document.Parsed,
  root: PathKey[],
  block: { map: YAMLMap; path: PathKey[] },
  own: string,
): RenderedRegistry {
  const defaults = chartDefaults(parsed, document, root, block);
  const others = [...new Set(defaults.map((d) => d.value))].filter((value) => value !== own);
  if (others.length === 0) return { registry: own };
  if (own === "" && others.length === 1) return { registry: others[0]! };
  const named = defaults.map((d) => `${d.key}: ${d.value}`);
  const readings = own === "" ? others : [own, ...others];
  return {
    readings,
    why:
      own === ""
        ? `its registry is empty and the chart defaults disagree (${named.join(", ")})`
        : `it names registry ${own} and the chart default ${named.join(", ")} names another; charts differ in which wins`,
  };
}

/** The non-empty default registries that apply to the block at `path`, with the keys that set them. */
function chartDefaults(
  parsed: ParsedYaml,
  document: Document.Parsed,
  root: PathKey[],
  block: { map: YAMLMap; path: PathKey[] },
): { key: string; value: string }[] {
  const found: { key: string; value: string }[] = [];
  const read = (from: unknown, path: PathKey[], key: string) => {
    const at = nodeAt(document, from, path);
    if (!at || !isScalar(at.node)) return;
    const value = scalarText(parsed.text, at.node) ?? "";
    if (value !== "") found.push({ key, value });
  };
  for (const path of GLOBAL_DEFAULTS) read(document.contents, [...root, ...path], path.join("."));
  const holder = block.path.slice(0, -1);
  for (const key of LOCAL_DEFAULTS) {
    if (holder.length > root.length) read(document.contents, [...holder, key], [...holder, key].join("."));
    read(block.map, [key], [...block.path, key].join("."));
  }
  return found;
}
