import type { Alias, Document, Scalar, YAMLMap } from "yaml";
import { scalarText, type ParsedYaml, type PathKey } from "../yaml/yaml-tree.js";

export type TargetKind = "kustomization" | "helm-values" | "manifest" | "marker";
export type ReferenceField = "image" | "name" | "tag" | "digest" | "repository" | "registry";

export interface FindOptions {
  /** Extra Helm values key paths (dotted) that hold this image, from the image's `helm` config. */
  helm?: { tag?: string; repository?: string; registry?: string; digest?: string }[];
  /** The Ferry image name from config that `# ferry: <name>` markers (and Flux policies) name. */
  markerName?: string;
  /** File name (or path), used to recognise `kustomization.yaml` files that lack apiVersion/kind. */
  fileName?: string;
  /**
   * Flux ImagePolicy names (`name` or `namespace:name`) that stand for this image, so that files
   * carrying Flux setter comments can be edited by Ferry unchanged.
   */
  imagePolicies?: string[];
}

/** One scalar of a file that holds part of an image reference. */
export interface Site {
  document: Document.Parsed;
  /** The scalar holding the value (an anchored scalar when reached through an alias). */
  scalar: Scalar;
  /** The alias written at this position, when the value is reached through one. */
  alias?: Alias;
  /** Path from the document root, aliases expanded: identifies this use of the scalar. */
  path: PathKey[];
  field: ReferenceField;
  /**
   * Text at the start of the value that is not part of the reference: the `name=` of an Argo CD
   * Kustomize image override `name=newName:tag`. It is kept as written.
   */
  prefix?: string;
  /**
   * Set when the scalar belongs to YAML embedded in a string of the file (Argo CD's `helm.values: |`):
   * `host` is the file's scalar holding it, `parsed` its parse, with node ranges moved to offsets
   * in the file, so that the edit is a splice of the file like any other; `document` is the file's
   * document holding `host`.
   */
  embedded?: { host: Scalar; parsed: ParsedYaml; document: Document.Parsed };
}

/**
 * One logical image reference in a file: a Kustomization `images:` entry, a Helm image block,
 * a container's `image:` string, or a marked line. Slots left empty are absent from the file.
 */
export interface ImageTarget {
  kind: TargetKind;
  document: Document.Parsed;
  /** A whole `repo:tag@digest` string. */
  image?: Site;
  /** The scalar naming the image (Kustomization `newName`/`name`, a Flux `:name` marker). */
  name?: Site;
  /** Whether `name` should be set to the image when it names another one (Flux `:name` semantics). */
  setName?: boolean;
  tag?: Site;
  digest?: Site;
  repository?: Site;
  registry?: Site;
  /**
   * The map that holds tag/digest keys, so that a missing key can be added. Absent for targets
   * that are a single scalar (manifest strings, markers).
   */
  holder?: { map: YAMLMap; tagKey: string; digestKey?: string };
}

export function targetSites(target: ImageTarget): Site[] {
  return [target.image, target.name, target.registry, target.repository, target.tag, target.digest].filter(
    (site): site is Site => site !== undefined,
  );
}

export interface ImageReference {
  kind: TargetKind;
  /** which part this scalar holds */
  field: ReferenceField;
  /** the scalar's [start, end) character offsets in the text, exact */
  range: [number, number];
  /** 1-based */
  line: number;
  /** 1-based */
  column: number;
  /** the scalar's current value */
  value: string;
}

/** Flattens targets into references, one per scalar, in file order. */
export function toReferences(parsed: ParsedYaml, targets: ImageTarget[]): ImageReference[] {
  const byStart = new Map<number, ImageReference>();
  for (const target of targets) {
    for (const site of targetSites(target)) {
      const range = site.scalar.range;
      if (!range || byStart.has(range[0])) continue;
      const { line, col } = parsed.lineCounter.linePos(range[0]);
      byStart.set(range[0], {
        kind: target.kind,
        field: site.field,
        range: [range[0], range[1]],
        line,
        column: col,
        value: scalarText(parsed.text, site.scalar) ?? "",
      });
    }
  }
  return [...byStart.values()].sort((a, b) => a.range[0] - b.range[0]);
}
