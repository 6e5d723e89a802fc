import { isMap, isScalar, type Document, type Node, type YAMLMap } from "yaml";
import { UserError } from "../errors.js";
import { parseImageName, sameImage } from "../image-ref.js";
import { argoSourcePaths, refuseTemplated } from "./argo-sources.js";
import { renderedRegistry } from "./chart-registry.js";
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
} from "../yaml/yaml-tree.js";

type HelmKeys = NonNullable<FindOptions["helm"]>[number];

/** A key that holds an image: `image`, `workerImage`, `sidecar_image`. */
const IMAGE_KEY = /image$/i;

/**
 * Helm values: image blocks at any depth (`image: {repository, tag}`, `registry` + `repository`
 * + `tag`, `digest`, and the layouts `blockTarget` lists), `image: repo:tag` strings (under any
 * key ending in `image`), and the dotted key paths configured for charts that use other names.
 * Values are a document without `kind`, a Flux HelmRelease's `spec.values`, or the
 * `helm.valuesObject` of an Argo CD Application's (or ApplicationSet template's) sources.
 */
export function findHelmValuesTargets(
  parsed: ParsedYaml,
  image: string,
  options: FindOptions = {},
): ImageTarget[] {
  const targets: ImageTarget[] = [];
  for (const document of parsed.documents) {
    const own = valuesRoot(parsed, document);
    if (own) {
      targets.push(...valuesTargets(parsed, document, own, image, options));
      continue;
    }
    for (const source of argoSourcePaths(parsed, document, options)) {
      const found = valuesTargets(parsed, document, [...source, "helm", "valuesObject"], image, options);
      targets.push(...refuseTemplated(parsed, image, found));
    }
  }
  return targets;
}

/** The targets of the values at `root` in one document. */
function valuesTargets(
  parsed: ParsedYaml,
  document: Document.Parsed,
  root: PathKey[],
  image: string,
  options: FindOptions,
): ImageTarget[] {
  const targets: ImageTarget[] = [];
  if (nodeAt(document, document.contents, root) === undefined) return targets;
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
      const target = blockTarget(parsed, document, root, node, path, image);
      if (target && !(target.tag && claimed.has(target.tag.scalar))) targets.push(target);
    } else if (
      isScalar(node) &&
      IMAGE_KEY.test(String(path[path.length - 1])) &&
      !isSplitImageBlock(visit.parent)
    ) {
      const value = scalarText(parsed.text, node);
      if (value === undefined || !namesImage(value, image)) return;
      const site: Site = { document, scalar: node, path, field: "image" };
      if (visit.alias) site.alias = visit.alias;
      targets.push({ kind: "helm-values", document, image: site });
    }
  });
  return targets;
}

/**
 * The path of the values inside the document, or undefined when the document holds no values.
 * A top-level `kind` without `apiVersion` is a chart option (prometheus-blackbox-exporter's
 * `kind: Deployment`), so such a document is values too; kustomize's own kinds excepted.
 */
function valuesRoot(parsed: ParsedYaml, document: Document.Parsed): PathKey[] | undefined {
  const { kind, apiVersion } = documentKind(parsed, document);
  if (
    kind === "HelmRelease" &&
    (apiVersion === undefined || apiVersion.startsWith("helm.toolkit.fluxcd.io/"))
  )
    return ["spec", "values"];
  if (kind === undefined) return [];
  if (apiVersion === undefined && kind !== "Kustomization" && kind !== "Component") return [];
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

/**
 * A map naming the image in one of the layouts charts use, holding `tag` and/or `digest`:
 *
 * - `repository` (+ `registry`): most charts, bitnami's `{{ registry }}/{{ repository }}`;
 * - `image` (+ `registry`): ingress-nginx's controller, rendered `{{ registry }}/{{ image }}:{{ tag }}@{{ digest }}`,
 *   with a non-empty `repository` taking the place of `registry/image`, and `chroot: true` adding
 *   `-chroot` to the name and reading `digestChroot`
 *   (https://github.com/kubernetes/ingress-nginx/blob/main/charts/ingress-nginx/values.yaml,
 *   templates/_helpers.tpl `ingress-nginx.image` and `ingress-nginx.imageDigest`);
 * - `name` (+ `registry`) under a key ending in `image`: Argo CD Image Updater's `image.name` /
 *   `image.tag` Helm parameters
 *   (https://argocd-image-updater.readthedocs.io/en/stable/configuration/images/).
 *
 * Null or empty parts are absent, as the chart renders them. A name part that carries its own tag
 * or digest would render doubled up (`org/name:v1:v2`), so such a block is not an image block.
 * An empty `registry` renders as the chart's default registry where the values set one
 * (`chart-registry.ts`); a block that may render this image or another, depending on templates the
 * values cannot show, is refused with the reason instead of being edited for a guess.
 */
function blockTarget(
  parsed: ParsedYaml,
  document: Document.Parsed,
  root: PathKey[],
  map: YAMLMap,
  path: PathKey[],
  image: string,
): ImageTarget | undefined {
  const text = (site: Site | undefined): string => (site ? (scalarText(parsed.text, site.scalar) ?? "") : "");
  const registry = siteIn(document, map, "registry", path, "registry");
  const tag = siteIn(document, map, "tag", path, "tag");
  const blockKey = String(path[path.length - 1] ?? "");
  const imageKey = IMAGE_KEY.test(blockKey);
  let repository = siteIn(document, map, "repository", path, "repository");
  let withRegistry = true;
  let digestKey = "digest";
  const inner = siteIn(document, map, "image", path, "repository");
  if (inner && (tag || map.has("digest"))) {
    // ingress-nginx: `repository`, when set, replaces `registry/image`.
    if (!text(repository)) repository = inner;
    else withRegistry = false;
    const chroot = mapValue(document, map, "chroot");
    if (chroot && isScalar(chroot.node) && chroot.node.value === true) digestKey = "digestChroot";
  } else if (!text(repository) && imageKey) {
    repository = siteIn(document, map, "name", path, "repository");
  }
  if (!repository) return undefined;
  const digest = siteIn(document, map, digestKey, path, "digest");
  // A block without tag or digest is an image block only where the key says so (the chart then
  // defaults the tag, usually to appVersion); elsewhere `repository` may mean something else.
  if (!tag && !digest && !imageKey) return undefined;
  const repositoryText = text(repository);
  if (!repositoryText) return undefined;
  const rendered = withRegistry
    ? renderedRegistry(parsed, document, root, { map, path }, text(registry))
    : { registry: "" };
  const names = ("registry" in rendered ? [rendered.registry] : rendered.readings).map((registryText) => {
    const name = registryText ? `${registryText}/${repositoryText}` : repositoryText;
    return digestKey === "digestChroot" ? `${name}-chroot` : name;
  });
  if (!names.every(isImageName) || !names.some((name) => sameImage(name, image))) return undefined;
  if ("why" in rendered) {
    const { line } = parsed.lineCounter.linePos(map.range?.[0] ?? 0);
    throw new UserError(
      "ambiguous-registry",
      `the image block ${path.join(".")} on line ${line} renders ${names.join(" or ")} depending on the chart's templates: ${rendered.why}; ` +
        "set its registry to the one the chart renders, or name its keys with `helm:` in .github/ferry.yml",
    );
  }
  const target: ImageTarget = {
    kind: "helm-values",
    document,
    repository,
    holder: { map, tagKey: "tag" },
  };
  if (registry && withRegistry) target.registry = registry;
  if (tag) target.tag = tag;
  if (digest) {
    target.digest = digest;
    target.holder!.digestKey = digestKey;
  }
  return target;
}

/** True for a name without tag or digest: the only kind a chart can append `:tag` to. */
function isImageName(name: string): boolean {
  try {
    parseImageName(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * True when a map is an image block whose `image` key is one part of it (ingress-nginx's layout),
 * so that the `image` string is not a whole reference.
 */
function isSplitImageBlock(map: YAMLMap | undefined): boolean {
  // The same test `blockTarget` makes before reading `image` as the name part of a block.
  return map !== undefined && (map.has("tag") || map.has("digest"));
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
