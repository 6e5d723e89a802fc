/**
 * Admission of a write, before the store keeps it: the request body checked against the resource
 * type and the URL, the name checked, the defaults the real server fills in (built-in kinds and a
 * CRD's structural schema), the validation the workloads Ferry deploys get, and the allocated
 * values an update keeps. Pure functions of the resource type and the object; the store
 * (`cluster-state.ts`) hands in what it owns (the CRD's schema, the next cluster IP).
 */
import { crdSchema, applySchemaDefaults } from "./crd-schema.js";
import { deepClone, isPlainObject, metadataOf, type JsonObject } from "./patches.js";
import { apiVersionOf, type ResourceType } from "./resource-types.js";
import { badRequest, invalid } from "./status.js";

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Validates shape, kind and namespace of a request body; returns a private copy. */
export function checkBody(type: ResourceType, namespace: string | undefined, body: unknown): JsonObject {
  if (!isPlainObject(body)) throw badRequest("the request body must be a JSON or YAML object");
  const object = deepClone(body);
  if (object.kind !== undefined && object.kind !== type.kind) {
    throw badRequest(
      `the kind of the object (${String(object.kind)}) does not match the resource (${type.kind})`,
    );
  }
  if (object.apiVersion !== undefined && object.apiVersion !== apiVersionOf(type)) {
    throw badRequest(
      `the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${apiVersionOf(type)})`,
    );
  }
  object.apiVersion = apiVersionOf(type);
  object.kind = type.kind;
  const metadata = metadataOf(object);
  if (type.namespaced) {
    if (metadata.namespace === undefined || metadata.namespace === "") metadata.namespace = namespace;
    else if (namespace !== undefined && metadata.namespace !== namespace) {
      throw badRequest(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    }
  } else {
    delete metadata.namespace;
  }
  return object;
}

export function checkName(type: ResourceType, name: unknown): string {
  if (typeof name !== "string" || name === "") {
    throw invalid(type.kind, type.group, "", [
      {
        field: "metadata.name",
        type: "FieldValueRequired",
        message: "Required value: name or generateName is required",
      },
    ]);
  }
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    throw invalid(type.kind, type.group, name, [
      {
        field: "metadata.name",
        message: `Invalid value: "${name}": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
      },
    ]);
  }
  return name;
}

/** Validation that the workloads Ferry cares about get from the real server. */
export function validate(type: ResourceType, object: JsonObject): void {
  if (type.group === "apps" && ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"].includes(type.kind)) {
    const spec = isPlainObject(object.spec) ? object.spec : {};
    const name = String(metadataOf(object).name);
    const selector = isPlainObject(spec.selector)
      ? (spec.selector.matchLabels as Record<string, string> | undefined)
      : undefined;
    const template = isPlainObject(spec.template) ? spec.template : {};
    const templateLabels = (isPlainObject(template.metadata) ? template.metadata.labels : undefined) as
      Record<string, string> | undefined;
    if (!isPlainObject(spec.selector)) {
      throw invalid(type.kind, type.group, name, [
        { field: "spec.selector", type: "FieldValueRequired", message: "Required value" },
      ]);
    }
    if (selector && !Object.entries(selector).every(([k, v]) => templateLabels?.[k] === v)) {
      throw invalid(type.kind, type.group, name, [
        {
          field: "spec.template.metadata.labels",
          message: "Invalid value: `selector` does not match template `labels`",
        },
      ]);
    }
    const containers = isPlainObject(template.spec) ? template.spec.containers : undefined;
    if (!Array.isArray(containers) || containers.length === 0) {
      throw invalid(type.kind, type.group, name, [
        { field: "spec.template.spec.containers", type: "FieldValueRequired", message: "Required value" },
      ]);
    }
  }
}

/** Defaults the real server fills in, applied before storing. */
export function applyDefaults(
  type: ResourceType,
  object: JsonObject,
  schema: ReturnType<typeof crdSchema>,
  allocateClusterIP: () => string,
): void {
  const spec = isPlainObject(object.spec) ? object.spec : undefined;
  if (type.group === "apps" && spec) {
    if (type.kind !== "DaemonSet" && spec.replicas === undefined) spec.replicas = 1;
    if (type.kind === "Deployment") {
      spec.progressDeadlineSeconds ??= 600;
      spec.revisionHistoryLimit ??= 10;
      spec.strategy ??= {
        type: "RollingUpdate",
        rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" },
      };
    }
  }
  if (type.group === "" && type.kind === "Service") {
    const serviceSpec = (object.spec ??= {}) as JsonObject;
    serviceSpec.type ??= "ClusterIP";
    if (serviceSpec.clusterIP === undefined && serviceSpec.type !== "ExternalName") {
      serviceSpec.clusterIP = allocateClusterIP();
      serviceSpec.clusterIPs = [serviceSpec.clusterIP];
    }
  }
  if (schema) applySchemaDefaults(schema, object);
  if (type.group === "" && type.kind === "Namespace") {
    object.status = { phase: "Active" };
    const metadata = metadataOf(object);
    metadata.labels = { ...(metadata.labels as object), "kubernetes.io/metadata.name": metadata.name };
  }
}

/**
 * An update that leaves out a Service's allocated clusterIP keeps it, as the real server's
 * Service strategy does (`patchAllocatedValues`), instead of allocating a new one.
 */
export function keepAllocatedValues(type: ResourceType, previous: JsonObject, next: JsonObject): void {
  if (type.group !== "" || type.kind !== "Service") return;
  const before = isPlainObject(previous.spec) ? previous.spec : {};
  const after = (isPlainObject(next.spec) ? next.spec : (next.spec = {})) as JsonObject;
  if (after.type === "ExternalName" || before.clusterIP === undefined) return;
  if (after.clusterIP === undefined || after.clusterIP === "") {
    after.clusterIP = before.clusterIP;
    if (after.clusterIPs === undefined) after.clusterIPs = before.clusterIPs;
  }
}
