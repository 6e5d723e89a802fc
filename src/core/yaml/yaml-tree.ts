import {
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Alias,
  type Document,
  type Node,
  type Scalar,
  type YAMLMap,
} from "yaml";
import { UserError } from "../errors.js";
import {
  MAX_EXPANDED_NODES,
  MAX_YAML_CHARS,
  YAML_PARSE_OPTIONS,
  type ParsedYaml,
  type PathKey,
} from "./parsed-yaml.js";
import { parseAllDocumentsUnique } from "./unique-keys.js";

export type { ParsedYaml, PathKey } from "./parsed-yaml.js";

/** A file that is not valid YAML, with the 1-based position of the first error. */
export class YamlSyntaxError extends UserError {
  readonly line: number;
  readonly column: number;
  constructor(line: number, column: number, why: string) {
    super("invalid-yaml", `invalid YAML at ${line}:${column}: ${why}`);
    this.line = line;
    this.column = column;
  }
}

export function parseYaml(text: string): ParsedYaml {
  if (text.length > MAX_YAML_CHARS)
    throw new UserError("file-too-large", `file is larger than ${MAX_YAML_CHARS} characters`);
  const lineCounter = new LineCounter();
  const documents = parseAllDocumentsUnique(text, { ...YAML_PARSE_OPTIONS, lineCounter });
  if (!Array.isArray(documents)) return { text, documents: [], lineCounter };
  for (const document of documents) {
    const error = document.errors[0];
    if (error) {
      const { line, col } = lineCounter.linePos(error.pos[0]);
      throw new YamlSyntaxError(line, col, error.message.split("\n")[0]!);
    }
  }
  return { text, documents, lineCounter };
}

/** One value position met while walking a document with aliases expanded. */
export interface Visit {
  /** The node found there, aliases resolved. */
  node: Node;
  /** The alias written at this position, when the value came through one. */
  alias?: Alias;
  /** Keys and indices from the document root, aliases expanded. */
  path: PathKey[];
  /** The map holding this value, when it is a map value. */
  parent?: YAMLMap;
  /** True when some alias on the way here was expanded: this is a use of an anchored node, not its definition. */
  throughAlias: boolean;
}

/**
 * Visits every value node (not keys) depth-first, expanding aliases, so that each use of an
 * anchored node is seen at its own path. Stops with a UserError past MAX_EXPANDED_NODES.
 */
export function walkDocument(document: Document.Parsed, visitor: (visit: Visit) => void): void {
  let budget = MAX_EXPANDED_NODES;
  const visitNode = (
    written: unknown,
    path: PathKey[],
    parent: YAMLMap | undefined,
    depth: number,
    throughAlias: boolean,
  ): void => {
    if (--budget < 0 || depth > 256) {
      throw new UserError(
        "yaml-too-complex",
        "the YAML expands to too many nodes through aliases (alias bomb?)",
      );
    }
    let node = written;
    let alias: Alias | undefined;
    if (isAlias(written)) {
      alias = written;
      node = written.resolve(document);
      if (node === undefined) return;
    }
    if (node === null || node === undefined || typeof node !== "object") return;
    const aliased = throughAlias || alias !== undefined;
    const visit: Visit = { node: node as Node, path, throughAlias: aliased };
    if (alias) visit.alias = alias;
    if (parent) visit.parent = parent;
    visitor(visit);
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = keyString(pair.key, document);
        if (key === undefined) continue;
        visitNode(pair.value, [...path, key], node, depth + 1, aliased);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => visitNode(item, [...path, index], undefined, depth + 1, aliased));
    }
  };
  visitNode(document.contents, [], undefined, 0, false);
}

/**
 * A map key as text, or undefined for complex keys (which no target uses). A key written as an
 * alias (`*app :`, common in bjw-s app-template HelmReleases) is the anchored scalar's value, as
 * the YAML spec composes it (https://yaml.org/spec/1.2.2/#71-alias-nodes).
 */
export function keyString(key: unknown, document?: Document.Parsed): string | undefined {
  const node = isAlias(key) && document ? key.resolve(document) : key;
  if (isScalar(node)) return node.value === null ? "" : String(node.value);
  return undefined;
}

/** The value node under `key` in a map, aliases resolved, with the alias when there was one. */
export function mapValue(
  document: Document.Parsed,
  map: YAMLMap,
  key: string,
): { node: Node; alias?: Alias } | undefined {
  const pair = map.items.find((item) => keyString(item.key, document) === key);
  if (!pair || pair.value === null || pair.value === undefined) return undefined;
  const value = pair.value as Node;
  if (isAlias(value)) {
    const resolved = value.resolve(document);
    return resolved ? { node: resolved, alias: value } : undefined;
  }
  return { node: value };
}

/**
 * A scalar value as the user wrote it: `1.20` stays `1.20` even though YAML reads a number. A null
 * (`null`, `~`, nothing) is "", the way a chart's `{{ .registry }}` renders it: no value, not a
 * registry named `null`.
 */
export function scalarText(text: string, scalar: Scalar): string | undefined {
  if (scalar.value === null || scalar.value === undefined) return "";
  if (scalar.type === "PLAIN" && scalar.range) return text.slice(scalar.range[0], scalar.range[1]);
  if (typeof scalar.value === "object") return undefined;
  return String(scalar.value);
}

/** The string held by a map's key, or undefined when absent or not a scalar. */
export function mapString(
  parsed: ParsedYaml,
  document: Document.Parsed,
  map: YAMLMap,
  key: string,
): string | undefined {
  const found = mapValue(document, map, key);
  if (!found || !isScalar(found.node)) return undefined;
  return scalarText(parsed.text, found.node);
}

/** The node at a path of keys from `root`, aliases resolved. */
export function nodeAt(
  document: Document.Parsed,
  root: unknown,
  path: PathKey[],
): { node: Node; alias?: Alias } | undefined {
  let current: { node: Node; alias?: Alias } | undefined = isAlias(root)
    ? { node: root.resolve(document) as Node, alias: root }
    : root
      ? { node: root as Node }
      : undefined;
  for (const key of path) {
    if (!current) return undefined;
    if (isMap(current.node)) {
      current = mapValue(document, current.node, String(key));
    } else if (isSeq(current.node) && typeof key === "number") {
      const item = current.node.items[key];
      current = isAlias(item)
        ? { node: item.resolve(document) as Node, alias: item }
        : item
          ? { node: item as Node }
          : undefined;
    } else {
      return undefined;
    }
  }
  return current?.node ? current : undefined;
}

/** The `kind` of a Kubernetes object document, if it has one. */
export function documentKind(
  parsed: ParsedYaml,
  document: Document.Parsed,
): { kind?: string; apiVersion?: string } {
  if (!isMap(document.contents)) return {};
  const kind = mapString(parsed, document, document.contents, "kind");
  const apiVersion = mapString(parsed, document, document.contents, "apiVersion");
  const result: { kind?: string; apiVersion?: string } = {};
  if (kind !== undefined) result.kind = kind;
  if (apiVersion !== undefined) result.apiVersion = apiVersion;
  return result;
}

export function pathKey(path: PathKey[]): string {
  return JSON.stringify(path);
}
