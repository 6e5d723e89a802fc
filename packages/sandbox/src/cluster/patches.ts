/**
 * The three classic patch formats: JSON merge patch (RFC 7386), strategic merge patch (merge
 * patch whose keyed lists — containers by name, ports by port, … — merge element by element)
 * and JSON patch (RFC 6902).
 */
import { badRequest, ApiError } from "./status.js";

export type JsonObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The object's `metadata`, created empty when it is missing or not an object. */
export function metadataOf(object: JsonObject): JsonObject {
  if (!isPlainObject(object.metadata)) object.metadata = {};
  return object.metadata as JsonObject;
}

export function deepClone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The merge key of a list field, by field name, for strategic merge and server-side apply.
 * The real server reads it from the OpenAPI schema; the names below cover the workload types
 * Ferry applies. Every other list is atomic (replaced whole).
 */
const LIST_MERGE_KEYS: Record<string, string[]> = {
  containers: ["name"],
  initContainers: ["name"],
  ephemeralContainers: ["name"],
  env: ["name"],
  volumes: ["name"],
  volumeMounts: ["mountPath"],
  imagePullSecrets: ["name"],
  volumeClaimTemplates: ["metadata.name"],
  // container ports key on containerPort, Service ports on port
  ports: ["containerPort", "port"],
  conditions: ["type"],
};

/** The key fields of one element of list `fieldName`, or undefined when the list is atomic. */
export function mergeKeyOf(fieldName: string, element: unknown): JsonObject | undefined {
  const candidates = LIST_MERGE_KEYS[fieldName];
  if (!candidates || !isPlainObject(element)) return undefined;
  for (const candidate of candidates) {
    const value = readDotted(element, candidate);
    if (value !== undefined) return { [candidate]: value };
  }
  return undefined;
}

export function isKeyedList(fieldName: string, list: unknown[]): boolean {
  return list.length > 0 && list.every((item) => mergeKeyOf(fieldName, item) !== undefined);
}

function readDotted(object: JsonObject, path: string): unknown {
  let value: unknown = object;
  for (const segment of path.split(".")) value = isPlainObject(value) ? value[segment] : undefined;
  return value;
}

export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return deepClone(patch);
  const result: JsonObject = isPlainObject(target) ? deepClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/**
 * Strategic merge: like merge patch, but keyed lists merge by key; supports the `$patch: delete`
 * element directive and `$patch: replace`, and drops `$setElementOrder/…` / `$retainKeys` hints.
 */
export function applyStrategicMergePatch(target: unknown, patch: unknown, fieldName = ""): unknown {
  if (Array.isArray(patch)) {
    if (!Array.isArray(target) || !patch.every((p) => mergeKeyOf(fieldName, p) !== undefined)) {
      return deepClone(patch.filter((p) => !(isPlainObject(p) && p.$patch === "delete")));
    }
    const result = deepClone(target) as unknown[];
    for (const element of patch as JsonObject[]) {
      const key = mergeKeyOf(fieldName, element)!;
      const index = result.findIndex((existing) => deepEqual(mergeKeyOf(fieldName, existing), key));
      if (element.$patch === "delete") {
        if (index >= 0) result.splice(index, 1);
      } else if (index >= 0) {
        result[index] = applyStrategicMergePatch(result[index], element);
      } else {
        result.push(applyStrategicMergePatch(undefined, element));
      }
    }
    return result;
  }
  if (!isPlainObject(patch)) return deepClone(patch);
  if (patch.$patch === "replace") {
    const { $patch: _directive, ...rest } = patch;
    return stripDirectives(rest);
  }
  const result: JsonObject = isPlainObject(target) ? deepClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith("$")) continue;
    if (value === null) delete result[key];
    else result[key] = applyStrategicMergePatch(result[key], value, key);
  }
  return result;
}

function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !k.startsWith("$"))
      .map(([k, v]) => [k, stripDirectives(v)]),
  );
}

interface JsonPatchOperation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw badRequest(`invalid JSON pointer ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function patchFailure(message: string): ApiError {
  return new ApiError(422, "Invalid", message);
}

export function applyJsonPatch(target: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw badRequest("json patch must be an array of operations");
  let document = deepClone(target);
  for (const raw of operations as JsonPatchOperation[]) {
    if (!isPlainObject(raw) || typeof raw.op !== "string" || typeof raw.path !== "string") {
      throw badRequest("json patch operation needs op and path");
    }
    const path = parsePointer(raw.path);
    switch (raw.op) {
      case "add":
        document = pointerAdd(document, path, deepClone(raw.value));
        break;
      case "remove":
        document = pointerRemove(document, path);
        break;
      case "replace":
        document = pointerAdd(pointerRemove(document, path), path, deepClone(raw.value));
        break;
      case "move": {
        const from = parsePointer(raw.from ?? "");
        const value = pointerGet(document, from);
        document = pointerAdd(pointerRemove(document, from), path, value);
        break;
      }
      case "copy":
        document = pointerAdd(document, path, deepClone(pointerGet(document, parsePointer(raw.from ?? ""))));
        break;
      case "test":
        if (!deepEqual(pointerGet(document, path), raw.value)) {
          throw patchFailure(
            `the server rejected our request due to an error in our request: test failed at ${raw.path}`,
          );
        }
        break;
      default:
        throw badRequest(`unknown json patch op ${JSON.stringify(raw.op)}`);
    }
  }
  return document;
}

function pointerGet(document: unknown, path: string[]): unknown {
  let value = document;
  for (const segment of path) {
    if (Array.isArray(value)) value = value[Number(segment)];
    else if (isPlainObject(value) && segment in value) value = value[segment];
    else throw patchFailure(`doc is missing path: /${path.join("/")}`);
    if (value === undefined) throw patchFailure(`doc is missing path: /${path.join("/")}`);
  }
  return value;
}

function pointerAdd(document: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const parent = pointerGet(document, path.slice(0, -1));
  const last = path[path.length - 1]!;
  if (Array.isArray(parent)) {
    const index = last === "-" ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length)
      throw patchFailure(`invalid index ${last}`);
    parent.splice(index, 0, value);
  } else if (isPlainObject(parent)) {
    parent[last] = value;
  } else {
    throw patchFailure(`doc is missing path: /${path.join("/")}`);
  }
  return document;
}

function pointerRemove(document: unknown, path: string[]): unknown {
  if (path.length === 0) return undefined;
  const parent = pointerGet(document, path.slice(0, -1));
  const last = path[path.length - 1]!;
  if (Array.isArray(parent)) {
    const index = Number(last);
    if (!(index >= 0 && index < parent.length)) throw patchFailure(`invalid index ${last}`);
    parent.splice(index, 1);
  } else if (isPlainObject(parent) && last in parent) {
    delete parent[last];
  } else {
    throw patchFailure(`doc is missing path: /${path.join("/")}`);
  }
  return document;
}
