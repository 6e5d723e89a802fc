import { isAlias, isMap, isScalar, isSeq, type Document, type Node, type Scalar, type YAMLMap } from "yaml";
import { UserError } from "../errors.js";
import { isValidDigest, isValidTag, parseImageName, parseImageRef } from "../image-ref.js";
import { findTargets, parseForImage, type FindOptions, type ImageReference } from "../targets/index.js";
import { reparseKept } from "../yaml/top-level-entries.js";
import { parseYaml, pathKey, walkDocument, type ParsedYaml } from "../yaml/yaml-tree.js";
import { embeddedHosts, refuseAliasedValuesStrings } from "./embedded-values.js";
import { planEdits, type EditPlan, type ImageUpdate, type KeyInsert } from "./plan-edits.js";
import { renderLike, renderPlain } from "./scalar-text.js";

export type { ImageUpdate } from "./plan-edits.js";

export interface FileEdit {
  line: number;
  field: ImageReference["field"];
  from: string;
  to: string;
}

interface Splice {
  start: number;
  end: number;
  text: string;
}

/**
 * Pure. Returns the new text, the edits (empty when nothing changes) and whether the file
 * references the image at all. Throws UserError and changes nothing when the value is invalid or
 * verification fails.
 *
 * Only the bytes of each value change (docs/architecture.md "Editing files"): the new value is spliced into the
 * original text in the quoting style of the old one, then the result is parsed again and
 * compared with the original, node by node, so that anything but the intended fields changing
 * (an injected document, a type change, a moved key) is refused.
 */
export function updateImage(
  text: string,
  update: ImageUpdate,
  options: FindOptions = {},
): { text: string; edits: FileEdit[]; referenced: boolean } {
  validateUpdate(update);
  const parsed = parseForImage(text, update.image, options);
  const targets = findTargets(parsed, update.image, options);
  if (targets.length === 0) return { text, edits: [], referenced: false };
  const plan = planEdits(parsed, targets, update);
  if (plan.sets.length === 0 && plan.inserts.length === 0) return { text, edits: [], referenced: true };
  // An added key is a new entry of its map, which may have been parsed only in part: adding
  // one (rare: a first digest pin, a missing tag) takes the whole file.
  if (parsed.partial && plan.inserts.length > 0)
    return { ...applyPlan(parseYaml(text), options, update), referenced: true };
  return { ...applyPlan(parsed, options, update, plan), referenced: true };
}

function applyPlan(
  parsed: ParsedYaml,
  options: FindOptions,
  update: ImageUpdate,
  planned?: EditPlan,
): { text: string; edits: FileEdit[] } {
  const { text } = parsed;
  const plan = planned ?? planEdits(parsed, findTargets(parsed, update.image, options), update);
  if (plan.sets.length === 0 && plan.inserts.length === 0) return { text, edits: [] };
  refuseSharedAnchors(parsed, plan, update.image);
  refuseAliasedValuesStrings(parsed, plan);

  const splices: Splice[] = [];
  const edits: FileEdit[] = [];
  for (const set of plan.sets) {
    const [start, end] = set.scalar.range!;
    // An empty value (`tag:` with nothing after it) has an empty range right after the colon, or,
    // followed by a comment (`tag:  # @schema type:[string, null]`), right before the `#`: a
    // value put there needs a space before the comment, or YAML reads `1.8.0#…` as the value.
    const empty = start === end;
    const gap = empty && text[start - 1] === ":" ? " " : "";
    const beforeComment = empty && text[end] === "#" ? " " : "";
    splices.push({ start, end, text: gap + renderLike(set.scalar, set.to) + beforeComment });
    edits.push({
      line: parsed.lineCounter.linePos(start).line,
      field: set.sites[0]!.field,
      from: set.from,
      to: set.to,
    });
  }
  const insertsByMap = new Map<YAMLMap, KeyInsert[]>();
  for (const insert of plan.inserts)
    insertsByMap.set(insert.map, [...(insertsByMap.get(insert.map) ?? []), insert]);
  for (const [map, inserts] of insertsByMap) {
    const splice = insertion(parsed, map, inserts);
    splices.push(splice);
    const line = parsed.lineCounter.linePos(splice.start).line;
    // Reported at the line each new key will occupy (block maps get one line per key).
    inserts.forEach((insert, index) => {
      edits.push({
        line: map.flow ? line : line + index + 1,
        field: insert.field,
        from: "",
        to: insert.value,
      });
    });
  }
  const newText = applySplices(text, splices);
  verify(parsed, newText, plan);
  edits.sort((a, b) => a.line - b.line);
  return { text: newText, edits };
}

/** Values are checked against the OCI grammar before anything is computed from them (docs/reliability.md row 14). */
function validateUpdate(update: ImageUpdate): void {
  const quoted = (value: string): string =>
    JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  parseImageName(update.image);
  if (update.tag !== undefined && !isValidTag(update.tag)) {
    throw new UserError(
      "invalid-tag",
      `tag ${quoted(update.tag)} is not a valid OCI tag (letters, digits, _ . -; at most 128; not starting with . or -)`,
    );
  }
  if (update.digest !== undefined && !isValidDigest(update.digest)) {
    throw new UserError(
      "invalid-digest",
      `digest ${quoted(update.digest)} is not sha256: followed by 64 lowercase hex digits`,
    );
  }
  if (update.pin !== "digest-only" && update.tag === undefined)
    throw new UserError("tag-required", `pin ${update.pin} needs a tag`);
  if (update.pin !== "tag" && update.digest === undefined)
    throw new UserError("digest-required", `pin ${update.pin} needs a digest`);
}

/**
 * An anchored value is edited only when every alias of it is a reference to this image in the
 * same role; otherwise editing it would silently change something else too.
 */
function refuseSharedAnchors(parsed: ParsedYaml, plan: EditPlan, image: string): void {
  const documents = new Set<Document.Parsed>(
    plan.sets.flatMap((set) => set.sites.map((site) => site.document)),
  );
  for (const document of documents) {
    const planned = new Map<Scalar, Set<string>>();
    for (const set of plan.sets) {
      if (set.sites[0]!.document !== document) continue;
      planned.set(set.scalar, new Set(set.sites.map((site) => pathKey(site.path))));
    }
    walkDocument(document, (visit) => {
      if (!visit.throughAlias || !isScalar(visit.node)) return;
      const sites = planned.get(visit.node);
      if (!sites || sites.has(pathKey(visit.path))) return;
      const { line } = parsed.lineCounter.linePos(visit.node.range?.[0] ?? 0);
      throw new UserError(
        "shared-anchor",
        `the value on line ${line} is anchored and its alias at ${visit.path.join(".")} is not a reference to ${image}; ` +
          "editing the anchor would change that too — give it its own value",
      );
    });
  }
}

/** Where and what to write to add `key: value` pairs at the end of a map, in its own layout. */
function insertion(parsed: ParsedYaml, map: YAMLMap, inserts: KeyInsert[]): Splice {
  const { text } = parsed;
  const last = map.items[map.items.length - 1];
  const lastNode = (last?.value ?? last?.key) as Node | undefined;
  if (!last || !lastNode?.range || !isScalar(last.key) || !last.key.range) {
    throw new UserError(
      "cannot-insert",
      `cannot add ${inserts.map((insert) => insert.key).join(", ")} to an empty map`,
    );
  }
  const entries = inserts.map((insert) => `${insert.key}: ${renderPlain(insert.value)}`);
  if (map.flow) {
    const end = lastNode.range[1];
    return { start: end, end, text: entries.map((entry) => `, ${entry}`).join("") };
  }
  // After the last key's line (its trailing comment included), at the first key's indentation.
  let end = lastNode.range[1];
  while (end > 0 && /[\s]/.test(text[end - 1]!)) end--;
  let lineEnd = text.indexOf("\n", end);
  if (lineEnd < 0) lineEnd = text.length;
  const crlf = text[lineEnd - 1] === "\r";
  const at = crlf ? lineEnd - 1 : lineEnd;
  const firstKey = map.items[0]!.key as Scalar;
  const column = parsed.lineCounter.linePos(firstKey.range![0]).col - 1;
  const eol = crlf || (lineEnd === text.length && text.includes("\r\n")) ? "\r\n" : "\n";
  return { start: at, end: at, text: entries.map((entry) => `${eol}${" ".repeat(column)}${entry}`).join("") };
}

function applySplices(text: string, splices: Splice[]): string {
  const ordered = [...splices].sort((a, b) => b.start - a.start);
  for (let index = 1; index < ordered.length; index++) {
    if (ordered[index]!.end > ordered[index - 1]!.start) throw new Error("overlapping splices");
  }
  let result = text;
  for (const splice of ordered)
    result = result.slice(0, splice.start) + splice.text + result.slice(splice.end);
  return result;
}

/** Parses the new text and checks that exactly the planned scalars and keys changed. */
function verify(before: ParsedYaml, newText: string, plan: EditPlan): void {
  const fail = (why: string): never => {
    throw new UserError("edit-verification-failed", `the edit was not written: ${why}`);
  };
  let after: { documents: Document.Parsed[] };
  if (before.partial) {
    // Only the parsed entries can have changed; the rest must be byte for byte what they were.
    const reparsed = reparseKept(before.text, before.partial, newText);
    if ("why" in reparsed) return fail(reparsed.why);
    after = reparsed;
  } else {
    try {
      after = parseYaml(newText);
    } catch (error) {
      return fail(`the edited file does not parse (${(error as Error).message})`);
    }
  }
  if (after.documents.length !== before.documents.length) fail("the number of documents changed");
  const expected = new Map<Scalar, string>(plan.sets.map((set) => [set.scalar, set.to]));
  const inserted = new Map<YAMLMap, KeyInsert[]>();
  for (const insert of plan.inserts) inserted.set(insert.map, [...(inserted.get(insert.map) ?? []), insert]);
  // Strings holding edited YAML (`helm.values: |`) are compared as the YAML they hold.
  const hosts = embeddedHosts(plan);

  const compare = (a: unknown, b: unknown, where: string): void => {
    if (a === null || a === undefined) {
      if (!(b === null || b === undefined)) fail(`a value appeared at ${where}`);
      return;
    }
    if (isAlias(a)) {
      if (!isAlias(b) || a.source !== b.source) fail(`the alias at ${where} changed`);
      return;
    }
    const nodeA = a as Node;
    const nodeB = b as Node;
    if (!nodeB || nodeA.anchor !== nodeB.anchor || nodeA.tag !== nodeB.tag)
      fail(`the node at ${where} changed its anchor or tag`);
    if (isScalar(nodeA)) {
      if (!isScalar(nodeB)) return fail(`the value at ${where} is no longer a scalar`);
      const embedded = hosts.get(nodeA)?.parsed;
      if (embedded) {
        if (nodeB.type !== nodeA.type) fail(`the string at ${where} changed its style`);
        let values: ParsedYaml;
        try {
          values = parseYaml(String(nodeB.value));
        } catch (error) {
          return fail(`the YAML in ${where} does not parse (${(error as Error).message})`);
        }
        if (values.documents.length !== embedded.documents.length)
          fail(`the number of documents in ${where} changed`);
        embedded.documents.forEach((document, index) =>
          compare(document.contents, values.documents[index]!.contents, `${where} (values)`),
        );
        return;
      }
      const want = expected.get(nodeA);
      if (want !== undefined) {
        if (nodeB.value !== want)
          fail(`${where} reads ${JSON.stringify(nodeB.value)} instead of ${JSON.stringify(want)}`);
      } else if (typeof nodeA.value !== typeof nodeB.value || String(nodeA.value) !== String(nodeB.value)) {
        fail(`${where} changed`);
      }
      return;
    }
    if (isMap(nodeA)) {
      if (!isMap(nodeB)) return fail(`${where} is no longer a map`);
      const extra = inserted.get(nodeA) ?? [];
      if (nodeB.items.length !== nodeA.items.length + extra.length) fail(`the keys of ${where} changed`);
      nodeA.items.forEach((pair, index) => {
        const other = nodeB.items[index]!;
        compare(pair.key, other.key, `${where} key ${index}`);
        compare(pair.value, other.value, `${where}.${isScalar(pair.key) ? String(pair.key.value) : index}`);
      });
      extra.forEach((insert, index) => {
        const pair = nodeB.items[nodeA.items.length + index]!;
        if (
          !isScalar(pair.key) ||
          pair.key.value !== insert.key ||
          !isScalar(pair.value) ||
          pair.value.value !== insert.value
        ) {
          fail(`${where}.${insert.key} was not added as intended`);
        }
      });
      return;
    }
    if (isSeq(nodeA)) {
      if (!isSeq(nodeB) || nodeB.items.length !== nodeA.items.length) return fail(`${where} changed length`);
      nodeA.items.forEach((item, index) => compare(item, nodeB.items[index], `${where}[${index}]`));
      return;
    }
    fail(`unexpected node at ${where}`);
  };
  before.documents.forEach((document, index) =>
    compare(document.contents, after.documents[index]!.contents, `document ${index + 1}`),
  );
  // Whole strings must still be valid references after the edit.
  for (const set of plan.sets) {
    const whole = set.sites.find((site) => site.field === "image");
    if (whole) parseImageRef(set.to.slice(whole.prefix?.length ?? 0));
  }
}
