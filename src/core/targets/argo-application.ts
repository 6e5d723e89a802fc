import { isMap, isNode, isScalar, isSeq, visit, type Document, type Scalar } from "yaml";
import { UserError } from "../errors.js";
import { parseImageName, sameImage } from "../image-ref.js";
import { argoSourcePaths, refuseTemplated } from "./argo-sources.js";
import { findHelmValuesTargets } from "./helm-values.js";
import { namesImage } from "./manifest.js";
import type { FindOptions, ImageTarget, Site } from "./target.js";
import {
  mapString,
  nodeAt,
  parseYaml,
  scalarText,
  type ParsedYaml,
  type PathKey,
} from "../yaml/yaml-tree.js";

/**
 * Image references in the sources of Argo CD Applications, ApplicationSet templates and
 * `.argocd-source-<app>.yaml` files (argo-sources.ts): `kustomize.images` override strings,
 * `helm.parameters` that set an image's keys, and the values YAML of a `helm.values: |` string.
 * A source's `helm.valuesObject` is read as Helm values (helm-values.ts).
 */
export function findArgoSourceTargets(
  parsed: ParsedYaml,
  image: string,
  options: FindOptions = {},
): ImageTarget[] {
  const targets: ImageTarget[] = [];
  // A values string reached twice (through an alias) is read once: its values are one set of scalars.
  const hosts = new Set<Scalar>();
  for (const document of parsed.documents) {
    for (const source of argoSourcePaths(parsed, document, options)) {
      targets.push(...kustomizeImageTargets(parsed, document, source, image));
      targets.push(
        ...refuseTemplated(parsed, image, parameterTargets(parsed, document, source, image, options)),
      );
      const values = nodeAt(document, document.contents, [...source, "helm", "values"]);
      if (
        values &&
        isScalar(values.node) &&
        typeof values.node.value === "string" &&
        !hosts.has(values.node)
      ) {
        hosts.add(values.node);
        targets.push(...embeddedValuesTargets(parsed, document, values.node, image, options));
      }
    }
  }
  return targets;
}

/**
 * `kustomize.images` entries, in the syntax of `kustomize edit set image`: `name=newName:tag`,
 * `name:tag`, `name@digest`, `name=newName@digest`. An entry refers to the image that runs
 * (`newName` when there is one); only its tag and digest change, `name=` is kept.
 */
function kustomizeImageTargets(
  parsed: ParsedYaml,
  document: Document.Parsed,
  source: PathKey[],
  image: string,
): ImageTarget[] {
  const path = [...source, "kustomize", "images"];
  const images = nodeAt(document, document.contents, path);
  if (!images || !isSeq(images.node)) return [];
  const targets: ImageTarget[] = [];
  images.node.items.forEach((item, index) => {
    if (!isScalar(item) || typeof item.value !== "string") return;
    const value = scalarText(parsed.text, item) ?? "";
    const equals = value.indexOf("=");
    const prefix = equals < 0 ? "" : value.slice(0, equals + 1);
    const reference = value.slice(prefix.length);
    const site: Site = { document, scalar: item, path: [...path, index], field: "image" };
    if (reference.includes("{{")) {
      // `ghcr.io/acme/shop:{{.tag}}`: the image, at a version the generators fill in.
      const name = reference.slice(0, reference.indexOf("{{")).replace(/[:@]$/, "");
      if (isImageName(name) && sameImage(name, image))
        refuseTemplated(parsed, image, [{ kind: "kustomization", document, image: site }]);
      return;
    }
    if (!namesImage(reference, image)) return;
    if (prefix) site.prefix = prefix;
    targets.push({ kind: "kustomization", document, image: site });
  });
  return targets;
}

/** `image.tag`, `controller.image.repository`, `workerImage.digest`: a parameter naming part of an image block. */
const IMAGE_PARAMETER = /^((?:.*\.)?[^.]*image)\.(repository|name|registry|tag|digest)$/i;
/** A parameter holding a whole `repo:tag` reference: `image`, `sidecar.image`. */
const WHOLE_IMAGE_PARAMETER = /^(?:.*\.)?[^.]*image$/i;

type Part = "repository" | "registry" | "tag" | "digest";

/**
 * `helm.parameters` (`{name: image.tag, value: "1.7.0"}`, as Argo CD Image Updater writes them):
 * parameters named like the keys of an image block (`<…image>.repository` or `.name`, `.registry`,
 * `.tag`, `.digest`) form one block, which refers to the image its repository parameter names.
 * The key paths configured under `helm:` name parameters too; a configured tag without a
 * repository is taken as the image's, as in values files.
 */
function parameterTargets(
  parsed: ParsedYaml,
  document: Document.Parsed,
  source: PathKey[],
  image: string,
  options: FindOptions,
): ImageTarget[] {
  const path = [...source, "helm", "parameters"];
  const list = nodeAt(document, document.contents, path);
  if (!list || !isSeq(list.node)) return [];
  const byName = new Map<string, Site>();
  const repeated = new Set<string>();
  const targets: ImageTarget[] = [];
  list.node.items.forEach((item, index) => {
    if (!isMap(item)) return;
    const name = mapString(parsed, document, item, "name");
    const value = item.get("value", true);
    if (name === undefined || !isScalar(value)) return;
    if (byName.has(name)) {
      repeated.add(name);
      return;
    }
    const site: Site = { document, scalar: value, path: [...path, index, "value"], field: "image" };
    byName.set(name, site);
    const text = scalarText(parsed.text, value) ?? "";
    if (WHOLE_IMAGE_PARAMETER.test(name) && namesImage(text, image))
      targets.push({ kind: "helm-values", document, image: site });
  });
  const text = (site: Site | undefined): string => (site ? (scalarText(parsed.text, site.scalar) ?? "") : "");
  const block = (parts: Partial<Record<Part, string>>, configured: boolean): ImageTarget | undefined => {
    const sites: Partial<Record<Part, Site>> = {};
    for (const part of ["repository", "registry", "tag", "digest"] as const) {
      const site = parts[part] !== undefined ? byName.get(parts[part]) : undefined;
      if (site) sites[part] = { ...site, field: part };
    }
    if (!sites.tag && !sites.digest) return undefined;
    if (sites.repository || !configured) {
      const repository = text(sites.repository);
      if (!repository) return undefined;
      const name = text(sites.registry) ? `${text(sites.registry)}/${repository}` : repository;
      if (!isImageName(name) || !sameImage(name, image)) return undefined;
    }
    const twice = Object.values(parts).find((name) => repeated.has(name));
    if (twice !== undefined) {
      const { line } = parsed.lineCounter.linePos(list.node.range?.[0] ?? 0);
      throw new UserError(
        "ambiguous-parameters",
        `the helm.parameters on line ${line} set ${twice} more than once; keep one`,
      );
    }
    return { kind: "helm-values", document, ...sites };
  };
  const claimed = new Set<Scalar>();
  for (const keys of options.helm ?? []) {
    const target = block(keys, true);
    if (!target) continue;
    if (target.tag) claimed.add(target.tag.scalar);
    targets.push(target);
  }
  const prefixes = new Set<string>();
  for (const name of byName.keys()) {
    const match = IMAGE_PARAMETER.exec(name);
    if (match) prefixes.add(match[1]!);
  }
  for (const prefix of prefixes) {
    const repository = byName.has(`${prefix}.repository`) ? `${prefix}.repository` : `${prefix}.name`;
    const target = block(
      {
        repository,
        registry: `${prefix}.registry`,
        tag: `${prefix}.tag`,
        digest: `${prefix}.digest`,
      },
      false,
    );
    if (target && !(target.tag && claimed.has(target.tag.scalar))) targets.push(target);
  }
  return targets;
}

function isImageName(name: string): boolean {
  try {
    parseImageName(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * The Helm values targets of a `helm.values` string. A literal block (`values: |`) without an
 * indentation indicator holds the values line for line, each line indented alike, so a value in
 * it is a splice of the file's bytes; any other string holding the image is refused.
 */
function embeddedValuesTargets(
  parsed: ParsedYaml,
  document: Document.Parsed,
  host: Scalar,
  image: string,
  options: FindOptions,
): ImageTarget[] {
  let inner: ParsedYaml;
  try {
    inner = parseYaml(String(host.value));
  } catch {
    return [];
  }
  const targets = findHelmValuesTargets(inner, image, options);
  if (targets.length === 0) return [];
  const line = parsed.lineCounter.linePos(host.range?.[0] ?? 0).line;
  const refuse = (why: string): never => {
    throw new UserError(
      "unsupported-embedded-values",
      `the helm.values string on line ${line} holds ${image} but ${why}; write it as a literal block (\`values: |\`) or use helm.valuesObject`,
    );
  };
  const offsets = literalBlockOffsets(parsed.text, host);
  if ("why" in offsets) return refuse(offsets.why);
  for (const values of inner.documents) {
    visit(values, (_key, node) => {
      if (isNode(node) && node.range) {
        const [start, valueEnd, end] = node.range;
        node.range = [offsets.toFile(start), offsets.toFile(valueEnd), offsets.toFile(end)];
      }
    });
  }
  for (const target of targets) {
    for (const site of [target.image, target.registry, target.repository, target.tag, target.digest]) {
      if (!site) continue;
      const [start, end] = site.scalar.range!;
      if (parsed.text.slice(start, end).includes("\n")) refuse("a value of it spans lines");
      site.embedded = { host, parsed: inner, document };
    }
  }
  return refuseTemplated(parsed, image, targets);
}

/**
 * Maps offsets in a literal block scalar's value to offsets in the file, or says why it cannot:
 * the value must be the block's lines with one common indentation removed.
 */
function literalBlockOffsets(
  text: string,
  host: Scalar,
): { toFile: (offset: number) => number } | { why: string } {
  if (host.type !== "BLOCK_LITERAL" || !host.range)
    return {
      why: `it is ${host.type === "BLOCK_FOLDED" ? "a folded block (`>`)" : "a one-line string"}, not a literal block`,
    };
  const [start, end] = host.range;
  const headerEnd = text.indexOf("\n", start);
  if (headerEnd < 0 || headerEnd >= end) return { why: "it is empty" };
  if (!/^\|[-+]?[ \t]*(?:#.*)?\r?$/.test(text.slice(start, headerEnd)))
    return { why: "its block header is not a bare `|`, `|-` or `|+` (an indentation indicator?)" };
  const lines: { file: number; text: string }[] = [];
  for (let at = headerEnd + 1; at < end;) {
    let lineEnd = text.indexOf("\n", at);
    if (lineEnd < 0 || lineEnd > end) lineEnd = end;
    lines.push({ file: at, text: text.slice(at, lineEnd).replace(/\r$/, "") });
    at = lineEnd + 1;
  }
  const first = lines.find((entry) => entry.text.trim() !== "");
  const indent = first ? /^ */.exec(first.text)![0].length : 0;
  const innerStarts: number[] = [];
  const values: string[] = [];
  let offset = 0;
  for (const entry of lines) {
    const blank = entry.text.trim() === "";
    if (!blank && !entry.text.startsWith(" ".repeat(indent)))
      return { why: "its lines are not indented alike" };
    const value = blank && entry.text.length < indent ? "" : entry.text.slice(indent);
    innerStarts.push(offset);
    values.push(value);
    offset += value.length + 1;
  }
  if (values.join("\n").trimEnd() !== String(host.value).trimEnd())
    return { why: "its value is not its lines as written" };
  const toFile = (inner: number): number => {
    let index = innerStarts.length - 1;
    while (index > 0 && innerStarts[index]! > inner) index--;
    return lines[index]!.file + indent + (inner - innerStarts[index]!);
  };
  return { toFile };
}
