/**
 * Structural-schema defaulting for custom resources: the real API server fills in each
 * `default` of a CRD's `openAPIV3Schema` when the field is absent, on every write and read
 * (Kubernetes docs, "Defaulting" under CustomResourceDefinitions). The simulator used to store
 * custom resources as sent, so a reconciler could never meet a server-defaulted field of a CR.
 */
import { isPlainObject, type JsonObject } from "./patches.js";

interface Schema {
  type?: string;
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
