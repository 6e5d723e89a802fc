import { isMap, isSeq, type Document } from "yaml";
import type { FindOptions } from "./target.js";
import { documentKind, nodeAt, type ParsedYaml, type PathKey } from "../yaml/yaml-tree.js";

/** Argo CD's per-application parameter override file, which Argo CD Image Updater writes back. */
const ARGOCD_SOURCE_FILE = /(?:^|[\\/])\.argocd-source(?:-[^\\/]+)?\.ya?ml$/;

/**
 * Where Argo CD application sources sit in a document: `spec.source` and each `spec.sources[i]`
 * of an `argoproj.io` Application, the same under an ApplicationSet's `spec.template.spec`, and
 * the root of an `.argocd-source-<app>.yaml` file, which holds a source's `kustomize:` and `helm:`
 * overrides (docs/config.md "Argo CD").
 */
export function argoSourcePaths(
  parsed: ParsedYaml,
  document: Document.Parsed,
  options: FindOptions = {},
): PathKey[][] {
  const { kind, apiVersion } = documentKind(parsed, document);
  if (kind === undefined) {
    if (
      options.fileName !== undefined &&
      ARGOCD_SOURCE_FILE.test(options.fileName) &&
      isMap(document.contents)
    )
      return [[]];
    return [];
  }
  if (!apiVersion?.startsWith("argoproj.io/")) return [];
  const spec: PathKey[] | undefined =
    kind === "Application" ? ["spec"] : kind === "ApplicationSet" ? ["spec", "template", "spec"] : undefined;
  if (!spec) return [];
  const paths: PathKey[][] = [];
  const single = nodeAt(document, document.contents, [...spec, "source"]);
  if (single && isMap(single.node)) paths.push([...spec, "source"]);
  const several = nodeAt(document, document.contents, [...spec, "sources"]);
  if (several && isSeq(several.node)) {
    several.node.items.forEach((_item, index) => {
      const source = nodeAt(document, several.node, [index]);
      if (source && isMap(source.node)) paths.push([...spec, "sources", index]);
    });
  }
  return paths;
}
