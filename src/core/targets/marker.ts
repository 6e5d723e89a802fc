import { isScalar } from "yaml";
import type { FindOptions, ImageTarget, ReferenceField, Site } from "./target.js";
import { scalarText, walkDocument, type ParsedYaml } from "../yaml/yaml-tree.js";

/** What a marker says its scalar holds. */
export type MarkerPart = "image" | "name" | "tag" | "digest";

export interface Marker {
  /** `ferry` for `# ferry: <name>`, `flux` for `# {"$imagepolicy": "ns:name"}`. */
  style: "ferry" | "flux";
  /** The Ferry image name, or the Flux policy as `namespace:name`. */
  name: string;
  /** The part named explicitly (`:tag`, `:name`, `:digest`), if any. */
  part?: MarkerPart;
}

const FERRY_MARKER = /^#\s*ferry:\s*([a-z0-9][a-z0-9_-]*)(?::(tag|name|digest))?\s*$/;
const FLUX_MARKER = /^#\s*(\{.*"\$imagepolicy".*\})\s*$/;

/** Reads a line's trailing comment as a marker. */
export function parseMarker(comment: string): Marker | undefined {
  const ferry = FERRY_MARKER.exec(comment);
  if (ferry)
    return ferry[2]
      ? { style: "ferry", name: ferry[1]!, part: ferry[2] as MarkerPart }
      : { style: "ferry", name: ferry[1]! };
  const flux = FLUX_MARKER.exec(comment);
  if (!flux) return undefined;
  let policy: unknown;
  try {
    policy = (JSON.parse(flux[1]!) as Record<string, unknown>)["$imagepolicy"];
  } catch {
    return undefined;
  }
  if (typeof policy !== "string") return undefined;
  const [namespace, name, part, ...rest] = policy.split(":");
  if (!namespace || !name || rest.length > 0) return undefined;
  if (part === undefined) return { style: "flux", name: `${namespace}:${name}` };
  if (part !== "tag" && part !== "name" && part !== "digest") return undefined;
  return { style: "flux", name: `${namespace}:${name}`, part };
}

/**
 * Scalars whose line carries a marker for this image: `# ferry: <image-name>` (with optional
 * `:tag`/`:name`/`:digest`), or a Flux setter `# {"$imagepolicy": "ns:name"}` with Flux
 * semantics: the whole value, `:tag` only the tag, `:name` only the name, `:digest` only the digest.
 */
export function findMarkerTargets(parsed: ParsedYaml, options: FindOptions = {}): ImageTarget[] {
  if (options.markerName === undefined && (options.imagePolicies ?? []).length === 0) return [];
  const targets: ImageTarget[] = [];
  for (const document of parsed.documents) {
    walkDocument(document, (visit) => {
      if (!isScalar(visit.node)) return;
      const written = visit.alias ?? visit.node;
      if (!written.range) return;
      const marker = parseMarker(trailingComment(parsed.text, written.range[1]));
      if (!marker || !markerNamesImage(marker, options)) return;
      const field = markerField(
        marker,
        visit.path[visit.path.length - 1],
        scalarText(parsed.text, visit.node) ?? "",
      );
      const site: Site = { document, scalar: visit.node, path: visit.path, field };
      if (visit.alias) site.alias = visit.alias;
      const target: ImageTarget = { kind: "marker", document };
      if (field === "image") target.image = site;
      else if (field === "tag") target.tag = site;
      else if (field === "digest") target.digest = site;
      else {
        target.name = site;
        target.setName = true;
      }
      targets.push(target);
    });
  }
  return targets;
}

/** The comment after a value on the same line, or "". */
function trailingComment(text: string, valueEnd: number): string {
  let end = text.indexOf("\n", valueEnd);
  if (end < 0) end = text.length;
  const rest = text.slice(valueEnd, end).replace(/\r$/, "");
  const match = /^[ \t]+(#.*)$/.exec(rest);
  return match ? match[1]!.trimEnd() : "";
}

function markerNamesImage(marker: Marker, options: FindOptions): boolean {
  if (marker.style === "ferry") return marker.name === options.markerName;
  const policyName = marker.name.slice(marker.name.indexOf(":") + 1);
  const names = [
    ...(options.imagePolicies ?? []),
    ...(options.markerName !== undefined ? [options.markerName] : []),
  ];
  return names.includes(marker.name) || names.includes(policyName);
}

/**
 * A Flux marker without a part means the whole value. A Ferry marker without a part means what
 * the key says (`tag`, `newTag`, `digest`), else the whole `repo:tag` value.
 */
function markerField(
  marker: Marker,
  key: unknown,
  value: string,
): Exclude<ReferenceField, "repository" | "registry"> {
  if (marker.part) return marker.part;
  if (marker.style === "flux") return "image";
  const keyName = typeof key === "string" ? key : "";
  if (/digest$/i.test(keyName) || /^sha256:/.test(value)) return "digest";
  if (/tag$/i.test(keyName) || /version$/i.test(keyName)) return "tag";
  return "image";
}
