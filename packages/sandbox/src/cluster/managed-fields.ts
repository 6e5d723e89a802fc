/**
 * Server-side apply and field ownership (`metadata.managedFields`, format FieldsV1).
 *
 * Granularity, compared with the real structured-merge-diff:
 * - every map key is a field (`f:spec` → `f:replicas`); scalars, empty maps and atomic lists are leaves;
 * - lists named in `LIST_MERGE_KEYS` (containers/env/volumes by name, ports by port, …) are keyed
 *   (`k:{"name":"app"}` with a `.` entry for the element itself); every other list is atomic;
 * - maps never carry a `.` entry (the real server adds one for `labels`/`annotations`);
 * - as on the real server, a manager is identified by name, operation and subresource, so an
 *   apply by `kubectl` conflicts with `kubectl scale` (an Update by `kubectl` on `/scale`).
 */
import { ApiError } from "./status.js";
import { deepClone, deepEqual, isKeyedList, isPlainObject, mergeKeyOf, type JsonObject } from "./patches.js";

export interface ManagedFieldsEntry {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time: string;
  fieldsType: "FieldsV1";
  fieldsV1: JsonObject;
  subresource?: string;
}

/** A field path: `f:<name>` / `k:<json key>` segments, ending with `.` for a keyed element itself. */
export type FieldPath = string[];

/** Which part of an object a write may touch: everything, everything but status, or only status. */
export type FieldScope = "all" | "main" | "status";

/** Metadata the server owns; never part of anyone's field set. */
const SERVER_METADATA = new Set([
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "managedFields",
  "selfLink",
]);

const pathKey = (path: FieldPath): string => JSON.stringify(path);

/** Every leaf path of `object` within `scope`. */
export function fieldPaths(object: JsonObject, scope: FieldScope): Map<string, FieldPath> {
  const paths = new Map<string, FieldPath>();
  const add = (path: FieldPath) => paths.set(pathKey(path), path);
  const walk = (value: unknown, prefix: FieldPath, fieldName: string) => {
    if (isPlainObject(value) && Object.keys(value).length > 0) {
      for (const [key, child] of Object.entries(value)) walk(child, [...prefix, `f:${key}`], key);
    } else if (Array.isArray(value) && isKeyedList(fieldName, value)) {
      for (const element of value) {
        const elementPrefix = [...prefix, `k:${JSON.stringify(mergeKeyOf(fieldName, element))}`];
        add([...elementPrefix, "."]);
        for (const [key, child] of Object.entries(element as JsonObject))
          walk(child, [...elementPrefix, `f:${key}`], key);
      }
    } else {
      add(prefix);
    }
  };
  for (const [key, value] of Object.entries(object)) {
    if (key === "apiVersion" || key === "kind") continue;
    if (scope === "main" && key === "status") continue;
    if (scope === "status" && key !== "status") continue;
    if (key === "metadata" && isPlainObject(value)) {
      for (const [metaKey, metaValue] of Object.entries(value)) {
        if (!SERVER_METADATA.has(metaKey)) walk(metaValue, ["f:metadata", `f:${metaKey}`], metaKey);
      }
      continue;
    }
    walk(value, [`f:${key}`], key);
  }
  return paths;
}

interface Located {
  found: boolean;
  value?: unknown;
  parent?: JsonObject | unknown[];
  key?: string | number;
}

/** Finds the value a field path points at (the element itself for a trailing `.`). */
function locate(object: unknown, path: FieldPath): Located {
  let current: unknown = object;
  let parent: JsonObject | unknown[] | undefined;
  let key: string | number | undefined;
  let fieldName = "";
  for (const segment of path) {
    if (segment === ".") break;
    if (segment.startsWith("f:")) {
      fieldName = segment.slice(2);
      if (!isPlainObject(current) || !(fieldName in current)) return { found: false };
      parent = current;
      key = fieldName;
      current = current[fieldName];
    } else if (segment.startsWith("k:")) {
      if (!Array.isArray(current)) return { found: false };
      const wanted = JSON.parse(segment.slice(2)) as unknown;
      const index = current.findIndex((element) => deepEqual(mergeKeyOf(fieldName, element), wanted));
      if (index < 0) return { found: false };
      parent = current;
      key = index;
      current = current[index];
    } else {
      return { found: false };
    }
  }
  return {
    found: true,
    value: current,
    ...(parent ? { parent } : {}),
    ...(key !== undefined ? { key } : {}),
  };
}

export function valueAt(object: unknown, path: FieldPath): unknown {
  return locate(object, path).value;
}

function removeAt(object: JsonObject, path: FieldPath): void {
  const located = locate(object, path);
  if (!located.found || located.parent === undefined || located.key === undefined) return;
  if (Array.isArray(located.parent)) located.parent.splice(located.key as number, 1);
  else delete located.parent[located.key as string];
}

/** `.spec.template.spec.containers[name="app"].image`, as the real conflict messages print it. */
export function describePath(path: FieldPath): string {
  let text = "";
  for (const segment of path) {
    if (segment === ".") continue;
    if (segment.startsWith("f:")) text += `.${segment.slice(2)}`;
    else {
      const key = JSON.parse(segment.slice(2)) as JsonObject;
      text += `[${Object.entries(key)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(",")}]`;
    }
  }
  return text;
}

export function toFieldsV1(paths: Iterable<FieldPath>): JsonObject {
  const root: JsonObject = {};
  for (const path of paths) {
    let node = root;
    for (const segment of path) {
      node[segment] ??= {};
      node = node[segment] as JsonObject;
    }
  }
  return root;
}

export function fromFieldsV1(fields: unknown): Map<string, FieldPath> {
  const paths = new Map<string, FieldPath>();
  const walk = (node: unknown, prefix: FieldPath) => {
    const children = isPlainObject(node) ? Object.entries(node) : [];
    if (children.length === 0) {
      if (prefix.length > 0) paths.set(pathKey(prefix), prefix);
      return;
    }
    for (const [segment, child] of children) walk(child, [...prefix, segment]);
  };
  walk(fields, []);
  return paths;
}

interface Ownership {
  manager: string;
  operation: "Apply" | "Update";
  apiVersion: string;
  time: string;
  subresource?: string;
  paths: Map<string, FieldPath>;
}

function readOwnership(object: JsonObject | undefined): Ownership[] {
  const metadata = (object?.metadata ?? {}) as JsonObject;
  const entries = Array.isArray(metadata.managedFields)
    ? (metadata.managedFields as ManagedFieldsEntry[])
    : [];
  return entries
    .filter((entry) => isPlainObject(entry) && typeof entry.manager === "string")
    .map((entry) => ({
      manager: entry.manager,
      operation: entry.operation === "Apply" ? "Apply" : "Update",
      apiVersion: entry.apiVersion,
      time: entry.time,
      ...(entry.subresource ? { subresource: entry.subresource } : {}),
      paths: fromFieldsV1(entry.fieldsV1),
    }));
}

function writeOwnership(object: JsonObject, owners: Ownership[]): void {
  const metadata = (object.metadata ??= {}) as JsonObject;
  const entries: ManagedFieldsEntry[] = owners
    .filter((owner) => owner.paths.size > 0)
    .map((owner) => ({
      manager: owner.manager,
      operation: owner.operation,
      apiVersion: owner.apiVersion,
      time: owner.time,
      fieldsType: "FieldsV1",
      fieldsV1: toFieldsV1(owner.paths.values()),
      ...(owner.subresource ? { subresource: owner.subresource } : {}),
    }));
  if (entries.length > 0) metadata.managedFields = entries;
  else delete metadata.managedFields;
}

/** Forgets paths that no longer exist in `object` (nobody owns a field that is gone). */
function dropVanishedPaths(owners: Ownership[], object: JsonObject): void {
  for (const owner of owners) {
    for (const [key, path] of owner.paths) if (!locate(object, path).found) owner.paths.delete(key);
  }
}

function ownerFor(
  owners: Ownership[],
  identity: {
    manager: string;
    operation: "Apply" | "Update";
    subresource?: string;
    apiVersion: string;
    time: string;
  },
): Ownership {
  let owner = owners.find(
    (o) =>
      o.manager === identity.manager &&
      o.operation === identity.operation &&
      o.subresource === identity.subresource,
  );
  if (!owner) {
    owner = { ...identity, paths: new Map() };
    owners.push(owner);
  }
  owner.apiVersion = identity.apiVersion;
  owner.time = identity.time;
  return owner;
}

export interface WriteIdentity {
  manager: string;
  apiVersion: string;
  /** "status" for writes to the status subresource. */
  subresource?: string;
  now: Date;
}

function timestamp(now: Date): string {
  return now.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * Records an ordinary write (create, update, non-apply patch): `manager` takes every field it
 * changed, away from whoever owned it before (updates never conflict).
 */
export function recordUpdate(
  previous: JsonObject | undefined,
  next: JsonObject,
  scope: FieldScope,
  who: WriteIdentity,
): void {
  const owners = readOwnership(previous);
  const changed: FieldPath[] = [];
  for (const path of fieldPaths(next, scope).values()) {
    const before = previous ? locate(previous, path) : { found: false };
    if (!before.found || !deepEqual(before.value, valueAt(next, path))) changed.push(path);
  }
  if (changed.length > 0) {
    const keys = new Set(changed.map(pathKey));
    for (const owner of owners) for (const key of keys) owner.paths.delete(key);
    const owner = ownerFor(owners, {
      manager: who.manager,
      operation: "Update",
      apiVersion: who.apiVersion,
      time: timestamp(who.now),
      ...(who.subresource ? { subresource: who.subresource } : {}),
    });
    for (const path of changed) owner.paths.set(pathKey(path), path);
  }
  dropVanishedPaths(owners, next);
  writeOwnership(next, owners);
}

export interface ApplyConflict {
  manager: string;
  apiVersion: string;
  subresource?: string;
  path: FieldPath;
}

export function applyConflictError(conflicts: ApplyConflict[], kind: string, name: string): ApiError {
  const byManager = new Map<string, ApplyConflict[]>();
  for (const conflict of conflicts) {
    const key = describeManager(conflict);
    byManager.set(key, [...(byManager.get(key) ?? []), conflict]);
  }
  const count = conflicts.length;
  const parts = [...byManager].map(([who, list]) =>
    list.length === 1
      ? `conflict with ${who}: ${describePath(list[0]!.path)}`
      : `conflicts with ${who}:\n${list.map((c) => `- ${describePath(c.path)}`).join("\n")}`,
  );
  const message = `Apply failed with ${count} conflict${count === 1 ? "" : "s"}: ${parts.join("\n")}`;
  return new ApiError(409, "Conflict", message, {
    name,
    kind,
    causes: conflicts.map((c) => ({
      type: "FieldManagerConflict",
      message: `conflict with ${describeManager(c)}`,
      field: describePath(c.path),
    })),
  });
}

function describeManager(conflict: ApplyConflict): string {
  const subresource = conflict.subresource ? ` with subresource "${conflict.subresource}"` : "";
  return `"${conflict.manager}"${subresource} using ${conflict.apiVersion}`;
}

/** Merges the applied configuration into the live object: maps by key, keyed lists by key. */
function mergeApplied(live: unknown, applied: unknown, fieldName: string): unknown {
  if (isPlainObject(applied)) {
    const result: JsonObject = isPlainObject(live) ? deepClone(live) : {};
    for (const [key, value] of Object.entries(applied)) result[key] = mergeApplied(result[key], value, key);
    return result;
  }
  if (Array.isArray(applied) && Array.isArray(live) && isKeyedList(fieldName, applied)) {
    const remaining = [...live];
    const result: unknown[] = [];
    for (const element of applied) {
      const key = mergeKeyOf(fieldName, element);
      const index = remaining.findIndex((existing) => deepEqual(mergeKeyOf(fieldName, existing), key));
      const match = index >= 0 ? remaining.splice(index, 1)[0] : undefined;
      result.push(mergeApplied(match, element, ""));
    }
    return [...result, ...remaining.map((element) => deepClone(element))];
  }
  return deepClone(applied);
}

function isKeyField(path: FieldPath): boolean {
  const parent = path[path.length - 2];
  const last = path[path.length - 1];
  if (!parent?.startsWith("k:") || !last?.startsWith("f:")) return false;
  const key = JSON.parse(parent.slice(2)) as JsonObject;
  return last.slice(2) in key;
}

/**
 * Server-side apply of `applied` (already restricted to `scope`) onto `live` by `who.manager`.
 * Throws a 409 FieldManagerConflict when it would change a field another manager owns, unless
 * `force`, which moves those fields to the applier. Returns the new object with managedFields.
 */
export function serverSideApply(
  live: JsonObject | undefined,
  applied: JsonObject,
  scope: FieldScope,
  who: WriteIdentity & { force: boolean; kind: string; name: string },
): JsonObject {
  const owners = readOwnership(live);
  const result: JsonObject = live ? deepClone(live) : {};
  const appliedPaths = fieldPaths(applied, scope);
  const subresource = who.subresource;
  const self = ownerFor(owners, {
    manager: who.manager,
    operation: "Apply",
    apiVersion: who.apiVersion,
    time: timestamp(who.now),
    ...(subresource ? { subresource } : {}),
  });
  const others = owners.filter((owner) => owner !== self);

  const conflicts: { owner: Ownership; key: string; path: FieldPath }[] = [];
  for (const [key, path] of appliedPaths) {
    if (path[path.length - 1] === ".") continue;
    for (const owner of others) {
      if (owner.paths.has(key) && !deepEqual(valueAt(result, path), valueAt(applied, path))) {
        conflicts.push({ owner, key, path });
      }
    }
  }
  if (conflicts.length > 0 && !who.force) {
    throw applyConflictError(
      conflicts.map((c) => ({
        manager: c.owner.manager,
        apiVersion: c.owner.apiVersion,
        path: c.path,
        ...(c.owner.subresource ? { subresource: c.owner.subresource } : {}),
      })),
      who.kind,
      who.name,
    );
  }
  for (const conflict of conflicts) conflict.owner.paths.delete(conflict.key);

  // Fields this manager applied before and omits now go away, unless someone else still owns them.
  const ownedByOthers = (path: FieldPath): boolean => {
    const prefix = pathKey(path[path.length - 1] === "." ? path.slice(0, -1) : path).slice(0, -1);
    return owners.some(
      (owner) =>
        owner !== self &&
        [...owner.paths.keys()].some((key) => key === pathKey(path) || key.startsWith(prefix + ",")),
    );
  };
  const dropped = [...self.paths].filter(([key]) => !appliedPaths.has(key)).map(([, path]) => path);
  // Leaves first, then whole keyed elements, so element lookups by key still work while removing.
  dropped.sort(
    (a, b) => Number(a[a.length - 1] === ".") - Number(b[b.length - 1] === ".") || b.length - a.length,
  );
  for (const path of dropped) {
    if (!ownedByOthers(path) && !isKeyField(path)) removeAt(result, path);
  }

  const merged = mergeApplied(result, applied, "") as JsonObject;
  self.paths = new Map(appliedPaths);
  dropVanishedPaths(owners, merged);
  writeOwnership(merged, owners);
  return merged;
}
