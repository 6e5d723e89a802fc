import { isMap, isScalar } from "yaml";
import { imageName, parseImageRef } from "../image-ref.js";
import { findTargets } from "../targets/index.js";
import { parseYaml, scalarText, walkDocument, type ParsedYaml } from "../yaml/yaml-tree.js";

/** At most this many distinct candidate names are confirmed per file. */
export const MAX_CANDIDATES_PER_FILE = 1000;

/**
 * The images (normalised `registry/repository` names) a file references that `wanted` accepts,
 * in file order (docs/config.md "Generated images and environments"). Every string of the file
 * that reads as an image reference, and every `registry` + `repository` pair of a map, is a
 * candidate; a candidate counts only when Ferry's own target finders (src/core/targets) find a
 * reference to it — the same finders the planner edits with, so an image is generated exactly
 * when Ferry could update it. A file that is not valid YAML references nothing here (the plan
 * reports it).
 */
export function discoverImages(text: string, fileName: string, wanted: (name: string) => boolean): string[] {
  let parsed: ParsedYaml;
  try {
    parsed = parseYaml(text);
  } catch {
    return [];
  }
  const candidates = new Set<string>();
  const consider = (value: string | undefined): void => {
    if (value === undefined || value.length === 0 || value.length > 512) return;
    let name: string;
    try {
      name = imageName(parseImageRef(value.toLowerCase()));
    } catch {
      return;
    }
    if (candidates.size < MAX_CANDIDATES_PER_FILE && wanted(name)) candidates.add(name);
  };
  try {
    for (const document of parsed.documents)
      walkDocument(document, ({ node }) => {
        if (isScalar(node) && typeof node.value === "string") consider(scalarText(parsed.text, node));
        else if (isMap(node)) {
          const registry = node.get("registry", true);
          const repository = node.get("repository", true);
          if (isScalar(registry) && isScalar(repository) && typeof registry.value === "string")
            consider(`${String(registry.value)}/${String(repository.value)}`);
        }
      });
  } catch {
    // An alias bomb: the planner refuses the file with its reason.
    return [];
  }
  const options = { fileName };
  return [...candidates].filter((name) => {
    try {
      return findTargets(parsed, name, options).length > 0;
    } catch {
      return false;
    }
  });
}
