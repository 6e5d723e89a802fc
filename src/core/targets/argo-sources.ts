import { isMap, isSeq, type Document } from "yaml";
import { UserError } from "../errors.js";
import { targetSites, type FindOptions, type ImageTarget } from "./target.js";
import { documentKind, nodeAt, scalarText, type ParsedYaml, type PathKey } from "../yaml/yaml-tree.js";

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

/**
 * An ApplicationSet fills `{{…}}` in its template from its generators, so a tag or digest written
 * so is not a value Ferry can set: such a target of the image is refused with the reason.
 */
export function refuseTemplated(parsed: ParsedYaml, image: string, targets: ImageTarget[]): ImageTarget[] {
  for (const target of targets) {
    for (const site of targetSites(target)) {
      const text = scalarText(parsed.text, site.scalar) ?? "";
      if (!text.includes("{{")) continue;
      const { line } = parsed.lineCounter.linePos(site.scalar.range?.[0] ?? 0);
      throw new UserError(
        "templated-value",
        `the ${site.field} of ${image} on line ${line} is a template (${text.slice(0, 80)}) filled in by Argo CD; ` +
          "Ferry edits only written values: set it where the generator takes it from, or leave this file out of paths",
      );
    }
  }
  return targets;
}
