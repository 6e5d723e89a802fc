/**
 * What of an object a diff compares: the object without the fields the API server or Ferry itself
 * writes (status, managedFields, resourceVersion…, the last-applied annotation, Ferry's ownership
 * labels), and how secret payloads are shown: a Secret's values never, only its keys; a
 * SOPS-encrypted object or a SealedSecret's encryptedData only as changed or unchanged.
 * docs/diff.md "What is compared" and "Secrets". Pure.
 */
import { isSopsMetadata } from "../check/plaintext-secrets.js";
import type { KubeObject } from "../kube-object.js";

/** metadata fields the API server sets. */
const SERVER_METADATA = [
  "managedFields",
  "resourceVersion",
  "uid",
  "generation",
  "creationTimestamp",
  "selfLink",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
];

/** Annotations written by kubectl or controllers, not by the config repo. */
const SERVER_ANNOTATIONS = [
  "kubectl.kubernetes.io/last-applied-configuration",
  "deployment.kubernetes.io/revision",
];

/** Labels Ferry's reconciler adds to what it applies (src/reconciler/desired-state.ts), with the value it sets. */
const FERRY_LABELS: Record<string, string | undefined> = {
  "ferry.dev/instance": undefined,
  "app.kubernetes.io/managed-by": "ferry",
};

/** A copy of `object` without server-managed fields and Ferry's own bookkeeping; below the top level the order of keys is kept. */
export function normalizeObject(object: KubeObject): KubeObject {
  // apiVersion, kind and metadata first (a live object read back may carry them last), the rest as rendered.
  const { apiVersion, kind, metadata: _metadata, ...rest } = plainCopy(object) as KubeObject;
  const copy = { apiVersion, kind, metadata: _metadata, ...rest } as KubeObject;
  delete copy.status;
  const metadata = copy.metadata;
  for (const field of SERVER_METADATA) delete metadata[field];
  if (metadata.annotations) {
    for (const name of SERVER_ANNOTATIONS) delete metadata.annotations[name];
    if (Object.keys(metadata.annotations).length === 0) delete metadata.annotations;
  }
  if (metadata.labels) {
    for (const [name, value] of Object.entries(FERRY_LABELS))
      if (name in metadata.labels && (value === undefined || metadata.labels[name] === value))
        delete metadata.labels[name];
    if (Object.keys(metadata.labels).length === 0) delete metadata.labels;
  }
  return copy;
}

/** A deep copy of JSON-like data: every alias expanded into its own copy, nothing shared. */
function plainCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainCopy);
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = plainCopy(item);
    return out;
  }
  return value;
}

/** JSON with keys sorted at every level: equal for objects that differ only in key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export type SecretPayload = "secret" | "sops" | "sealed" | "none";

/** How an object's payload is kept out of a diff. */
export function secretPayloadOf(object: KubeObject): SecretPayload {
  if (isSopsMetadata(object.sops)) return "sops";
  const group = object.apiVersion.includes("/")
    ? object.apiVersion.slice(0, object.apiVersion.lastIndexOf("/"))
    : "";
  if (object.kind === "Secret" && group === "") return "secret";
  if (object.kind === "SealedSecret" && group === "bitnami.com") return "sealed";
  return "none";
}

export interface SecretKeyChanges {
  added: string[];
  changed: string[];
  removed: string[];
}

/** What the placeholders say; the values themselves are never copied. */
export const HIDDEN = "(hidden)";
export const HIDDEN_CHANGED = "(hidden, changed)";
export const SEALED = "(sealed)";
export const SEALED_CHANGED = "(sealed, changed)";

/** A Secret's values by key, `stringData` read as the API server does (base64 of its text, over `data`). */
function secretValues(object: KubeObject | undefined): Map<string, string> {
  const values = new Map<string, string>();
  if (!object) return values;
  for (const [key, value] of entries(object.data)) values.set(key, String(value));
  for (const [key, value] of entries(object.stringData))
    values.set(key, Buffer.from(String(value), "utf8").toString("base64"));
  return values;
}

function entries(value: unknown): [string, unknown][] {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? Object.entries(value) : [];
}

/** Which keys of a Secret were added, changed or removed between `base` and `head`. */
export function secretKeyChanges(
  base: KubeObject | undefined,
  head: KubeObject | undefined,
): SecretKeyChanges {
  const before = secretValues(base);
  const after = secretValues(head);
  const sorted = (keys: string[]) => keys.sort();
  return {
    added: sorted([...after.keys()].filter((key) => !before.has(key))),
    changed: sorted([...after.keys()].filter((key) => before.has(key) && before.get(key) !== after.get(key))),
    removed: sorted([...before.keys()].filter((key) => !after.has(key))),
  };
}

/**
 * A copy of a Secret (or SealedSecret) to print: every value replaced by a placeholder, the ones in
 * `changed` by one that says so, so the printed diff shows the change without the value.
 */
export function maskSecret(
  object: KubeObject,
  payload: SecretPayload,
  changed: ReadonlySet<string>,
  head: boolean,
) {
  const copy: KubeObject = { ...object };
  if (payload === "secret") {
    for (const field of ["data", "stringData"] as const) {
      if (copy[field] === undefined) continue;
      copy[field] = Object.fromEntries(
        entries(copy[field]).map(([key]) => [key, head && changed.has(key) ? HIDDEN_CHANGED : HIDDEN]),
      );
    }
  }
  if (payload === "sealed" && typeof copy.spec === "object" && copy.spec !== null) {
    const spec = { ...(copy.spec as Record<string, unknown>) };
    if (spec.encryptedData !== undefined)
      spec.encryptedData = head && changed.size > 0 ? SEALED_CHANGED : SEALED;
    copy.spec = spec;
  }
  return copy;
}

/** Whether a SealedSecret's encryptedData differs. */
export function sealedChanged(base: KubeObject, head: KubeObject): boolean {
  const data = (object: KubeObject) =>
    (object.spec as { encryptedData?: unknown } | undefined)?.encryptedData;
  return canonicalJson(data(base)) !== canonicalJson(data(head));
}
