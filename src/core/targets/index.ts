import { UserError } from "../errors.js";
import { parseImageName, parseImageRef } from "../image-ref.js";
import { findArgoSourceTargets } from "./argo-application.js";
import { findHelmValuesTargets } from "./helm-values.js";
import { findKustomizationTargets } from "./kustomization.js";
import { findManifestTargets } from "./manifest.js";
import { findMarkerTargets } from "./marker.js";
import {
  targetSites,
  toReferences,
  type FindOptions,
  type ImageReference,
  type ImageTarget,
  type Site,
} from "./target.js";
import { parseKept } from "../yaml/top-level-entries.js";
import { parseYaml, scalarText, type ParsedYaml } from "../yaml/yaml-tree.js";

export type { FindOptions, ImageReference, ImageTarget, ReferenceField, Site, TargetKind } from "./target.js";
export { targetSites } from "./target.js";

/**
 * Every image target in a parsed file, in file order. Markers come first so that a marked
 * scalar's explicit meaning is seen before the structural one; a scalar may be found by
 * several finders (a marked `newTag`), and edits reconcile that per scalar.
 */
export function findTargets(parsed: ParsedYaml, image: string, options: FindOptions = {}): ImageTarget[] {
  const targets = [
    ...findMarkerTargets(parsed, options),
    ...findKustomizationTargets(parsed, image, options),
    ...findHelmValuesTargets(parsed, image, options),
    ...findArgoSourceTargets(parsed, image, options),
    ...findManifestTargets(parsed, image),
  ];
  return targets
    .map((target, order) => ({
      target,
      order,
      start: Math.min(...targetSites(target).map((site) => site.scalar.range?.[0] ?? Infinity)),
    }))
    .sort((a, b) => a.start - b.start || a.order - b.order)
    .map(({ target }) => target);
}

/** Keys that are parts of an image block or say what a document is: never left out of a parse. */
const STRUCTURAL_KEYS = [
  "apiVersion",
  "kind",
  "image",
  "repository",
  "registry",
  "name",
  "tag",
  "digest",
  "digestChroot",
  "chroot",
  "newName",
  "newTag",
  // A chart's default registry renders in front of a block with an empty `registry` (chart-registry.ts).
  "global",
  "defaultRegistry",
  "imageRegistry",
];

/**
 * The parse `findTargets(parsed, image, options)` needs: in a large file, only the top-level
 * entries that can hold a reference to the image (they name its last path component, carry a
 * marker, start a configured Helm key path, or are structural keys), else the whole file. Finding
 * in it gives exactly what finding in the whole file gives.
 */
export function parseForImage(text: string, image: string, options: FindOptions = {}): ParsedYaml {
  const { repository } = parseImageName(image);
  // ingress-nginx writes `image: org/name` with `chroot: true` for the image `org/name-chroot`.
  const needles = [repository.slice(repository.lastIndexOf("/") + 1).replace(/-chroot$/, "")];
  if (options.markerName !== undefined || (options.imagePolicies ?? []).length > 0)
    needles.push("ferry:", "$imagepolicy");
  const keys = new Set(STRUCTURAL_KEYS);
  for (const paths of options.helm ?? []) {
    for (const dotted of Object.values(paths)) if (dotted !== undefined) keys.add(dotted.split(".")[0]!);
    // A Flux HelmRelease holds the configured paths under spec.values, an Argo CD Application
    // under its sources' helm.parameters or valuesObject, and an .argocd-source file under helm.
    keys.add("spec");
    keys.add("helm");
  }
  // Configured key paths may sit anywhere: narrowing below the top level is for found blocks only.
  const narrow = (options.helm ?? []).length === 0;
  return parseKept(text, { keys, needles, narrow }) ?? parseYaml(text);
}

/** Every scalar in the text that holds part of a reference to `image`, with exact ranges. */
export function findReferences(text: string, image: string, options?: FindOptions): ImageReference[] {
  const parsed = parseYaml(text);
  return toReferences(parsed, findTargets(parsed, image, options));
}

/**
 * What the file currently runs for the image: tag and/or digest (first reference wins;
 * conflicting references → UserError). undefined if not referenced.
 */
export function currentImage(
  text: string,
  image: string,
  options?: FindOptions,
): { tag?: string; digest?: string; line: number } | undefined {
  return currentImageIn(parseYaml(text), image, options);
}

/**
 * `currentImage` on a file parsed once with `parseYaml`: a plan asks the same file about every
 * image, and one parse serves them all.
 */
export function currentImageIn(
  parsed: ParsedYaml,
  image: string,
  options?: FindOptions,
): { tag?: string; digest?: string; line: number } | undefined {
  const targets = findTargets(parsed, image, options);
  if (targets.length === 0) return undefined;
  let result: { tag?: string; digest?: string; line: number } | undefined;
  for (const target of targets) {
    const running = targetImage(parsed, target);
    const first = targetSites(target)[0];
    const line = first?.scalar.range ? parsed.lineCounter.linePos(first.scalar.range[0]).line : 1;
    if (!result) {
      result = { line, ...running };
      continue;
    }
    for (const part of ["tag", "digest"] as const) {
      const value = running[part];
      if (value === undefined) continue;
      if (result[part] === undefined) result[part] = value;
      else if (result[part] !== value) {
        throw new UserError(
          "conflicting-references",
          `${image} has ${part} ${result[part]} on line ${result.line} but ${value} on line ${line}`,
        );
      }
    }
  }
  return result;
}

/** The tag and digest one target holds (empty strings mean unset, as in Helm's `digest: ""`). */
export function targetImage(parsed: ParsedYaml, target: ImageTarget): { tag?: string; digest?: string } {
  const result: { tag?: string; digest?: string } = {};
  const text = (site: Site | undefined): string | undefined =>
    site ? scalarText(parsed.text, site.scalar) : undefined;
  const whole = text(target.image)?.slice(target.image?.prefix?.length ?? 0);
  if (whole) {
    try {
      const ref = parseImageRef(whole);
      if (ref.tag !== undefined) result.tag = ref.tag;
      if (ref.digest !== undefined) result.digest = ref.digest;
    } catch {
      // A marked value that is not (yet) a reference holds no tag.
    }
  }
  const tag = text(target.tag);
  if (tag) {
    const [tagPart, digestPart] = splitTagDigest(tag);
    if (tagPart) result.tag = tagPart;
    if (digestPart) result.digest = digestPart;
  }
  const digest = text(target.digest);
  if (digest) result.digest = digest;
  return result;
}

/** Helm charts often take `tag: 1.8.0@sha256:…`; splits it. */
export function splitTagDigest(value: string): [string, string | undefined] {
  const at = value.indexOf("@");
  return at < 0 ? [value, undefined] : [value.slice(0, at), value.slice(at + 1)];
}
