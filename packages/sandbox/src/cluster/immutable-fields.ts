/**
 * Fields the real API server refuses to change once set, with its 422 wording, so an immutable
 * change fails in the simulator as it does on a cluster (found by the cluster contract suite:
 * the simulator used to accept them). Sources: kubernetes `pkg/apis/apps/validation`
 * (`ValidateDeploymentUpdate` and friends: `spec.selector` is immutable in apps/v1),
 * `pkg/apis/core/validation` (`ValidateServiceUpdate`: clusterIPs "may not change once set";
 * `ValidateConfigMapUpdate`/`ValidateSecretUpdate`: `immutable: true`), `pkg/apis/batch/validation`
 * (`ValidateJobUpdate`: `spec.selector` and `spec.template`).
 */
import { deepEqual, isPlainObject, type JsonObject } from "./patches.js";
import type { ResourceType } from "./resource-types.js";
import { invalid, type StatusCause } from "./status.js";

function at(object: JsonObject, path: string[]): unknown {
  let value: unknown = object;
  for (const key of path) value = isPlainObject(value) ? value[key] : undefined;
  return value;
}

function immutable(field: string, value: unknown, message = "field is immutable"): StatusCause {
  return { field, message: `Invalid value: ${JSON.stringify(value)}: ${message}` };
}

/** Throws the real server's 422 when `next` changes a field `previous` had fixed. */
export function checkImmutableFields(type: ResourceType, previous: JsonObject, next: JsonObject): void {
  const causes: StatusCause[] = [];
  const unchanged = (path: string[]) => deepEqual(at(previous, path), at(next, path));
  if (type.group === "apps" && ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"].includes(type.kind)) {
    if (!unchanged(["spec", "selector"]))
      causes.push(immutable("spec.selector", at(next, ["spec", "selector"])));
  }
  if (type.group === "batch" && type.kind === "Job") {
    if (!unchanged(["spec", "selector"]))
      causes.push(immutable("spec.selector", at(next, ["spec", "selector"])));
    if (!unchanged(["spec", "template"]))
      causes.push(immutable("spec.template", at(next, ["spec", "template"])));
  }
  if (type.group === "" && type.kind === "Service") {
    const before = at(previous, ["spec", "clusterIP"]);
    const after = at(next, ["spec", "clusterIP"]);
    // Switching to or from ExternalName clears or allocates the IP; otherwise it is fixed once set.
    const externalName =
      at(previous, ["spec", "type"]) === "ExternalName" || at(next, ["spec", "type"]) === "ExternalName";
    if (!externalName && typeof before === "string" && before !== "" && after !== before) {
      causes.push(immutable("spec.clusterIPs[0]", [after], "may not change once set"));
    }
  }
  if (
    type.group === "" &&
    (type.kind === "ConfigMap" || type.kind === "Secret") &&
    previous.immutable === true
  ) {
    if (next.immutable !== true) causes.push(immutable("immutable", next.immutable));
    for (const field of ["data", "binaryData", "stringData"]) {
      if (!unchanged([field])) {
        causes.push({
          field,
          type: "FieldValueForbidden",
          message: "Forbidden: field is immutable when `immutable` is set",
        });
      }
    }
  }
  if (causes.length > 0) throw invalid(type.kind, type.group, String(at(next, ["metadata", "name"])), causes);
}
