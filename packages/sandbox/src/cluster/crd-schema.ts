/**
 * What a CRD's structural schema does to its custom resources on the real API server, found
 * missing from the simulator by the cluster contract suite:
 * - defaulting: each `default` of the `openAPIV3Schema` is filled in when the field is absent, on
 *   every write and read (Kubernetes docs, "Defaulting" under CustomResourceDefinitions);
 * - a server-side apply whose body has a field the schema does not declare is refused with
 *   HTTP 500 "failed to create typed patch object (...): .path: field not declared in schema"
 *   (structured-merge-diff builds the typed patch from the schema before any pruning).
 */
import { isPlainObject, type JsonObject } from "./patches.js";

interface Schema {
  type?: string;
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  default?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
}

function defaultValue(schema: Schema, value: unknown): unknown {
  if (isPlainObject(value)) {
    for (const [key, property] of Object.entries(schema.properties ?? {})) {
      if (value[key] === undefined && property.default !== undefined)
        value[key] = structuredClone(property.default);
      if (value[key] !== undefined) value[key] = defaultValue(property, value[key]);
    }
    if (isPlainObject(schema.additionalProperties)) {
      const inner = schema.additionalProperties;
      for (const key of Object.keys(value)) {
        if (!(key in (schema.properties ?? {}))) value[key] = defaultValue(inner, value[key]);
      }
    }
  } else if (Array.isArray(value) && schema.items) {
    return value.map((item) => defaultValue(schema.items!, item));
  }
  return value;
}

/** The version's schema in a CRD object, if it has one. */
export function crdSchema(crd: JsonObject, version: string): Schema | undefined {
  const versions = (
    crd.spec as { versions?: { name?: string; schema?: { openAPIV3Schema?: Schema } }[] } | undefined
  )?.versions;
  return versions?.find((candidate) => candidate.name === version)?.schema?.openAPIV3Schema;
}

/** Fills in the schema's defaults in place; `metadata`, `apiVersion` and `kind` are never defaulted. */
export function applySchemaDefaults(schema: Schema, object: JsonObject): void {
  const {
    metadata: _metadata,
    apiVersion: _apiVersion,
    kind: _kind,
    ...properties
  } = schema.properties ?? {};
  defaultValue({ ...schema, properties }, object);
}

/** The first field of `value` that `schema` does not declare, as `.spec.typo`; undefined when all are declared. */
function undeclared(schema: Schema, value: unknown, path: string): string | undefined {
  if (schema["x-kubernetes-preserve-unknown-fields"] === true) return undefined;
  if (isPlainObject(value)) {
    const properties = schema.properties ?? {};
    for (const [key, inner] of Object.entries(value)) {
      const property =
        properties[key] ??
        (isPlainObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if (property === undefined) {
        if (schema.additionalProperties === true || (schema.type !== "object" && !schema.properties))
          continue;
        return `${path}.${key}`;
      }
      const found = undeclared(property, inner, `${path}.${key}`);
      if (found) return found;
    }
  } else if (Array.isArray(value) && schema.items) {
    for (const item of value) {
      const found = undeclared(schema.items, item, path);
      if (found) return found;
    }
  }
  return undefined;
}

/** The first field of an applied custom resource its schema does not declare (`metadata`, `apiVersion`, `kind` are always declared). */
export function undeclaredField(schema: Schema, object: JsonObject): string | undefined {
  const { metadata: _metadata, apiVersion: _apiVersion, kind: _kind, ...rest } = object;
  return undeclared({ ...schema, type: "object" }, rest, "");
}
