import { isMap, isScalar, isSeq, type Document } from "yaml";
import { sameImage } from "../image-ref.js";
import type { FindOptions, ImageTarget, Site } from "./target.js";
import {
  documentKind,
  mapValue,
  nodeAt,
  scalarText,
  type ParsedYaml,
  type PathKey,
} from "../yaml/yaml-tree.js";

const KUSTOMIZATION_FILE = /(?:^|[\\/])(?:kustomization\.ya?ml|Kustomization)$/;

/**
 * Kustomization `images:` entries. `name` is the image as written in the manifests and `newName`
 * renames it, so an entry refers to the image that runs: `newName` when set, else `name`.
 * Also reads Flux's `kustomize.toolkit.fluxcd.io` Kustomization, whose `spec.images` is the same list.
 */
export function findKustomizationTargets(
  parsed: ParsedYaml,
  image: string,
  options: FindOptions = {},
): ImageTarget[] {
  const targets: ImageTarget[] = [];
  for (const document of parsed.documents) {
    const imagesPath = kustomizationImagesPath(parsed, document, options);
    if (!imagesPath) continue;
    const images = nodeAt(document, document.contents, imagesPath);
    if (!images || !isSeq(images.node)) continue;
    images.node.items.forEach((_item, index) => {
      const entryPath: PathKey[] = [...imagesPath, index];
      const entry = nodeAt(document, images.node, [index]);
      if (!entry || !isMap(entry.node)) return;
      const site = (key: string, field: Site["field"]): Site | undefined => {
        const found = mapValue(document, entry.node as never, key);
        if (!found || !isScalar(found.node)) return undefined;
        const result: Site = { document, scalar: found.node, path: [...entryPath, key], field };
        if (found.alias) result.alias = found.alias;
        return result;
      };
      const name = site("newName", "name") ?? site("name", "name");
      const written = name ? scalarText(parsed.text, name.scalar) : undefined;
      if (written === undefined || !sameImage(written, image)) return;
      const target: ImageTarget = {
        kind: "kustomization",
        document,
        name: name!,
        holder: { map: entry.node, tagKey: "newTag", digestKey: "digest" },
      };
      const tag = site("newTag", "tag");
      const digest = site("digest", "digest");
      if (tag) target.tag = tag;
      if (digest) target.digest = digest;
      targets.push(target);
    });
  }
  return targets;
}

/** Where the `images:` list sits in this document, if the document is a Kustomization. */
function kustomizationImagesPath(
  parsed: ParsedYaml,
  document: Document.Parsed,
  options: FindOptions,
): PathKey[] | undefined {
  const { kind, apiVersion } = documentKind(parsed, document);
  if (kind === "Kustomization" && apiVersion?.startsWith("kustomize.toolkit.fluxcd.io/"))
    return ["spec", "images"];
  if (kind === "Kustomization" || kind === "Component") return ["images"];
  if (kind !== undefined) return undefined;
  if (options.fileName !== undefined && KUSTOMIZATION_FILE.test(options.fileName)) return ["images"];
  // A kustomization.yaml may omit apiVersion and kind; its images list is a list of maps with `name`.
  const images = nodeAt(document, document.contents, ["images"]);
  if (images && isSeq(images.node) && images.node.items.length > 0) {
    const looksLikeEntries = images.node.items.every(
      (item) =>
        isMap(item) && item.has("name") && (item.has("newTag") || item.has("newName") || item.has("digest")),
    );
    if (looksLikeEntries) return ["images"];
  }
  return undefined;
}
