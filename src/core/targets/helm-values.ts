import { isMap, isScalar, type Document, type Node, type YAMLMap } from "yaml";
import { sameImage } from "../image-ref.js";
import { namesImage } from "./manifest.js";
import type { FindOptions, ImageTarget, Site } from "./target.js";
import {
  documentKind,
  mapValue,
  nodeAt,
  scalarText,
  walkDocument,
  type ParsedYaml,
  type PathKey,
} from "./yaml-tree.js";

type HelmKeys = NonNullable<FindOptions["helm"]>[number];

/**
 * Helm values: image blocks at any depth (`image: {repository, tag}`, `registry` + `repository`
 * + `tag`, `digest`), `image: repo:tag` strings, and the dotted key paths configured for charts
 * that use other names. Values are a document without `kind`, or a Flux HelmRelease's `spec.values`.
 */
export function findHelmValuesTargets(
  parsed: ParsedYaml,
  image: string,
  options: FindOptions = {},
): ImageTarget[] {
  const targets: ImageTarget[] = [];
  for (const document of parsed.documents) {
    const root = valuesRoot(parsed, document);
    if (!root) continue;
    const claimed = new Set<Node>();
    for (const keys of options.helm ?? []) {
      const target = configuredTarget(parsed, document, root, keys, image);
      if (!target) continue;
      if (target.tag) claimed.add(target.tag.scalar);
      targets.push(target);
    }
    walkDocument(document, (visit) => {
      if (!startsWith(visit.path, root)) return;
      const { node, path } = visit;
      if (isMap(node)) {
        const target = blockTarget(parsed, document, node, path, image);
        if (target && !(target.tag && claimed.has(target.tag.scalar))) targets.push(target);
      } else if (isScalar(node) && path[path.length - 1] === "image") {
        const value = scalarText(parsed.text, node);
        if (value === undefined || !namesImage(value, image)) return;
        const site: Site = { document, scalar: node, path, field: "image" };
        if (visit.alias) site.alias = visit.alias;
        targets.push({ kind: "helm-values", document, image: site });
      }
    });
  }
  return targets;
}

/** The path of the values inside the document, or undefined when the document holds no values. */
function valuesRoot(parsed: ParsedYaml, document: Document.Parsed): PathKey[] | undefined {
  const { kind, apiVersion } = documentKind(parsed, document);
  if (kind === undefined) return [];
  if (
    kind === "HelmRelease" &&
    (apiVersion === undefined || apiVersion.startsWith("helm.toolkit.fluxcd.io/"))
  )
    return ["spec", "values"];
  return undefined;
}

function startsWith(path: PathKey[], prefix: PathKey[]): boolean {
  return prefix.length <= path.length && prefix.every((key, index) => path[index] === key);
}

function siteIn(
  document: Document.Parsed,
  map: YAMLMap,
  key: string,
  path: PathKey[],
  field: Site["field"],
): Site | undefined {
  const found = mapValue(document, map, key);
  if (!found || !isScalar(found.node)) return undefined;
  const site: Site = { document, scalar: found.node, path: [...path, key], field };
  if (found.alias) site.alias = found.alias;
  return site;
}

/** A map with `repository` (and `registry`) naming the image, holding `tag` and/or `digest`. */
function blockTarget(
  parsed: ParsedYaml,
  document: Document.Parsed,
  map: YAMLMap,
  path: PathKey[],
  image: string,
): ImageTarget | undefined {
  const repository = siteIn(document, map, "repository", path, "repository");
  if (!repository) return undefined;
  const registry = siteIn(document, map, "registry", path, "registry");
  const tag = siteIn(document, map, "tag", path, "tag");
  const digest = siteIn(document, map, "digest", path, "digest");
  // A block without tag or digest is an image block only where the key says so (the chart then
  // defaults the tag, usually to appVersion); elsewhere `repository` may mean something else.
  if (!tag && !digest && !/image$/i.test(String(path[path.length - 1] ?? ""))) return undefined;
  const repositoryText = scalarText(parsed.text, repository.scalar);
  const registryText = registry ? scalarText(parsed.text, registry.scalar) : undefined;
  if (!repositoryText) return undefined;
  const name = registryText ? `${registryText}/${repositoryText}` : repositoryText;
  if (!sameImage(name, image)) return undefined;
  const target: ImageTarget = { kind: "helm-values", document, repository, holder: { map, tagKey: "tag" } };
  if (registry) target.registry = registry;
  if (tag) target.tag = tag;
  if (digest) {
    target.digest = digest;
    target.holder!.digestKey = "digest";
  }
  return target;
}

/** A target from configured dotted key paths (`app.image.version`), relative to the values root. */
function configuredTarget(
  parsed: ParsedYaml,
  document: Document.Parsed,
  root: PathKey[],
  keys: HelmKeys,
  image: string,
): ImageTarget | undefined {
  const at = (dotted: string | undefined, field: Site["field"]): Site | undefined => {
    if (dotted === undefined) return undefined;
    const path = [...root, ...dotted.split(".")];
    const found = nodeAt(document, document.contents, path);
    if (!found || !isScalar(found.node)) return undefined;
    const site: Site = { document, scalar: found.node, path, field };
    if (found.alias) site.alias = found.alias;
    return site;
  };
  const repository = at(keys.repository, "repository");
  const registry = at(keys.registry, "registry");
  const tag = at(keys.tag, "tag");
  const digest = at(keys.digest, "digest");
  if (repository) {
    const repositoryText = scalarText(parsed.text, repository.scalar) ?? "";
    const registryText = registry ? scalarText(parsed.text, registry.scalar) : undefined;
    if (!sameImage(registryText ? `${registryText}/${repositoryText}` : repositoryText, image))
      return undefined;
  }
  if (!tag && !digest) return undefined;
  const target: ImageTarget = { kind: "helm-values", document };
  if (repository) target.repository = repository;
  if (registry) target.registry = registry;
  if (tag) target.tag = tag;
  if (digest) target.digest = digest;
  // The configured digest key may be absent until the first digest pin: add it next to the tag.
  if (keys.tag !== undefined && keys.digest !== undefined) {
    const tagPath = keys.tag.split(".");
    const digestPath = keys.digest.split(".");
    const parent = nodeAt(document, document.contents, [...root, ...tagPath.slice(0, -1)]);
    if (
      parent &&
      isMap(parent.node) &&
      tagPath.slice(0, -1).join(".") === digestPath.slice(0, -1).join(".")
    ) {
      target.holder = {
        map: parent.node,
        tagKey: tagPath[tagPath.length - 1]!,
        digestKey: digestPath[digestPath.length - 1]!,
      };
    }
  }
  return target;
}
