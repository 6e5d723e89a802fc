/**
 * The in-memory API server behind the HTTP layer: storage, resource versions, the verbs
 * (get/list/create/update/patch/apply/delete), subresources, garbage collection and watch
 * fan-out. Everything throws `ApiError` so the HTTP layer can answer with a `Status`. What a
 * write must pass before it is stored (body, name, defaults, validation) is in `admission.ts`.
 *
 * Simplifications (documented, not accidental): no admission plugins or webhooks, RBAC or
 * finalizers (deletes are immediate; a namespace deletes its contents at once); one stored
 * version per resource, so a CRD with several versions serves the same object under each without
 * conversion; continue tokens page over the current state, not a snapshot.
 */
import { randomUUID, randomBytes } from "node:crypto";
import { parse as parseYaml } from "yaml";
import {
  ApiError,
  alreadyExists,
  badRequest,
  invalid,
  notFound,
  resourceVersionConflict,
  successStatus,
  unsupportedMediaType,
  type KubeStatus,
} from "./status.js";
import { apiVersionOf, ResourceRegistry, typesFromCrd, type ResourceType } from "./resource-types.js";
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  deepClone,
  deepEqual,
  isPlainObject,
  metadataOf,
  type JsonObject,
} from "./patches.js";
import { recordUpdate, serverSideApply, type FieldScope } from "./managed-fields.js";
import { checkImmutableFields } from "./immutable-fields.js";
import { crdSchema, undeclaredField } from "./crd-schema.js";
import { applyDefaults, checkBody, checkName, keepAllocatedValues, validate } from "./admission.js";
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from "./selectors.js";

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

export interface StoredEvent {
  type: WatchEventType;
  resourceVersion: number;
  typeKey: string;
  object: JsonObject;
}

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  /** `status` or `scale`; undefined for the main resource. */
  subresource?: string;
}

export interface ListOptions {
  labelSelector?: string | null;
  fieldSelector?: string | null;
  limit?: number;
  continueToken?: string | null;
}

export interface ObjectList {
  items: JsonObject[];
  resourceVersion: string;
  continueToken?: string;
  remainingItemCount?: number;
}

export type PatchType = "json" | "merge" | "strategic" | "apply";

export const PATCH_CONTENT_TYPES: Record<string, PatchType> = {
  "application/json-patch+json": "json",
  "application/merge-patch+json": "merge",
  "application/strategic-merge-patch+json": "strategic",
  "application/apply-patch+yaml": "apply",
  "application/apply-patch+cbor": "apply",
};

/** How many events watches can resume from by default; older resource versions get 410 Expired. */
export const DEFAULT_WATCH_HISTORY = 5000;

export function typeKeyOf(type: Pick<ResourceType, "group" | "plural">): string {
  return `${type.plural}.${type.group}`;
}

function objectKey(namespace: string | undefined, name: string): string {
  return `${namespace ?? ""}/${name}`;
}

export interface Watcher {
  typeKey: string;
  namespace?: string;
  matches: (object: JsonObject) => boolean;
  send: (event: StoredEvent) => void;
}

export class ClusterState {
  readonly registry = new ResourceRegistry();
  private readonly objects = new Map<string, Map<string, JsonObject>>();
  private revision = 1;
  private readonly history: StoredEvent[] = [];
  private readonly watchers = new Set<Watcher>();
  private readonly listeners = new Set<(event: StoredEvent) => void>();
  private serviceIpCounter = 10;

  constructor(
    private readonly watchHistory = DEFAULT_WATCH_HISTORY,
    private readonly now: () => Date = () => new Date(),
    /** How long after its create a new CRD's kind is served (0: at once). */
    private readonly crdEstablishMs = 0,
  ) {
    for (const name of ["default", "kube-system", "kube-public", "kube-node-lease"]) {
      this.create(
        this.type("v1", "Namespace"),
        undefined,
        { apiVersion: "v1", kind: "Namespace", metadata: { name } },
        {
          fieldManager: "kube-apiserver",
        },
      );
    }
  }

  currentResourceVersion(): string {
    return String(this.revision);
  }

  /** The type of `apiVersion`/`kind`, or a 404 like the real server for an unknown kind. */
  type(apiVersion: string, kind: string): ResourceType {
    const type = this.registry.byKind(apiVersion, kind);
    if (!type)
      throw new ApiError(
        404,
        "NotFound",
        `the server could not find the requested resource (kind ${kind} in ${apiVersion})`,
      );
    return type;
  }

  onChange(listener: (event: StoredEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private bucket(type: ResourceType): Map<string, JsonObject> {
    const key = typeKeyOf(type);
    let bucket = this.objects.get(key);
    if (!bucket) {
      bucket = new Map();
      this.objects.set(key, bucket);
    }
    return bucket;
  }

  private withApiVersion(type: ResourceType, object: JsonObject): JsonObject {
    const copy = deepClone(object);
    copy.apiVersion = apiVersionOf(type);
    copy.kind = type.kind;
    return copy;
  }

  private requireNamespace(type: ResourceType, namespace: string | undefined): void {
    if (!type.namespaced) return;
    if (!namespace)
      throw badRequest("the server could not find the requested resource: a namespace is required");
    if (!this.bucket(this.type("v1", "Namespace")).has(objectKey(undefined, namespace))) {
      throw notFound("namespaces", "", namespace);
    }
  }

  private find(type: ResourceType, namespace: string | undefined, name: string): JsonObject {
    const object = this.bucket(type).get(objectKey(type.namespaced ? namespace : undefined, name));
    if (!object) throw notFound(type.plural, type.group, name);
    return object;
  }

  exists(type: ResourceType, namespace: string | undefined, name: string): boolean {
    return this.bucket(type).has(objectKey(type.namespaced ? namespace : undefined, name));
  }

  get(type: ResourceType, namespace: string | undefined, name: string): JsonObject {
    return this.withApiVersion(type, this.find(type, namespace, name));
  }

  list(type: ResourceType, namespace: string | undefined, options: ListOptions = {}): ObjectList {
    const labels = parseLabelSelector(options.labelSelector);
    const fields = parseFieldSelector(options.fieldSelector);
    const after = options.continueToken ? decodeContinue(options.continueToken) : undefined;
    const all = [...this.bucket(type)]
      .filter(([, object]) => !type.namespaced || !namespace || metadataOf(object).namespace === namespace)
      .filter(([, object]) => matchesLabels(metadataOf(object).labels as Record<string, string>, labels))
      .filter(([, object]) => matchesFields(object, fields))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .filter(([key]) => after === undefined || key > after);
    const limit = options.limit && options.limit > 0 ? options.limit : all.length;
    const page = all.slice(0, limit);
    const result: ObjectList = {
      items: page.map(([, object]) => this.withApiVersion(type, object)),
      resourceVersion: this.currentResourceVersion(),
    };
    if (page.length < all.length) {
      result.continueToken = encodeContinue(page[page.length - 1]![0]);
      result.remainingItemCount = all.length - page.length;
    }
    return result;
  }

  create(
    type: ResourceType,
    namespace: string | undefined,
    body: unknown,
    options: WriteOptions = {},
  ): JsonObject {
    const object = checkBody(type, namespace, body);
    const metadata = metadataOf(object);
    if (!metadata.name && typeof metadata.generateName === "string") {
      metadata.name = `${metadata.generateName}${randomBytes(3).toString("hex").slice(0, 5)}`;
    }
    const name = checkName(type, metadata.name);
    this.requireNamespace(type, metadata.namespace as string | undefined);
    if (this.bucket(type).has(objectKey(metadata.namespace as string | undefined, name))) {
      throw alreadyExists(type.plural, type.group, name);
    }
    for (const field of [
      "resourceVersion",
      "uid",
      "creationTimestamp",
      "generation",
      "managedFields",
      "deletionTimestamp",
    ]) {
      delete metadata[field];
    }
    if (type.hasStatus) delete object.status;
    const scope: FieldScope = type.hasStatus ? "main" : "all";
    recordUpdate(undefined, object, scope, this.identity(type, options));
    return this.commit(type, undefined, object, options);
  }

  update(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: WriteOptions = {},
  ): JsonObject {
    const previous = this.find(type, namespace, name);
    const object = checkBody(type, namespace, body);
    const metadata = metadataOf(object);
    if (metadata.name !== name) {
      throw badRequest(
        `the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`,
      );
    }
    const requestedVersion = metadata.resourceVersion;
    if (
      requestedVersion !== undefined &&
      requestedVersion !== "" &&
      requestedVersion !== metadataOf(previous).resourceVersion
    ) {
      throw resourceVersionConflict(type.plural, type.group, name);
    }
    return this.write(type, previous, object, options);
  }

  patch(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    patchType: PatchType,
    rawBody: string,
    options: WriteOptions & { force?: boolean } = {},
  ): JsonObject {
    if (patchType === "apply") return this.apply(type, namespace, name, rawBody, options);
    const previous = this.find(type, namespace, name);
    const patch = parseJson(rawBody);
    let next: unknown;
    if (patchType === "json") next = applyJsonPatch(previous, patch);
    else if (patchType === "merge") next = applyMergePatch(previous, patch);
    else {
      if (type.custom) throw unsupportedMediaType("application/strategic-merge-patch+json");
      next = applyStrategicMergePatch(previous, patch);
    }
    if (!isPlainObject(next)) throw badRequest("the patch did not produce an object");
    const requestedVersion = isPlainObject(next.metadata) ? next.metadata.resourceVersion : undefined;
    if (requestedVersion !== undefined && requestedVersion !== metadataOf(previous).resourceVersion) {
      throw resourceVersionConflict(type.plural, type.group, name);
    }
    return this.write(type, previous, next, options);
  }

  /** Server-side apply: creates the object when missing. */
  private apply(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    rawBody: string,
    options: WriteOptions & { force?: boolean },
  ): JsonObject {
    if (!options.fieldManager) {
      throw badRequest(
        "PATCH, application/apply-patch+yaml requests must specify fieldManager (the fieldManager query parameter)",
      );
    }
    let parsed: unknown;
    try {
      parsed = parseYaml(rawBody);
    } catch (error) {
      throw badRequest(`error decoding YAML: ${(error as Error).message}`);
    }
    const applied = checkBody(type, namespace, parsed);
    const metadata = metadataOf(applied);
    const schema = type.custom ? this.customSchema(type) : undefined;
    const unknownField = schema && undeclaredField(schema, applied);
    if (unknownField) {
      throw new ApiError(
        500,
        "",
        `failed to create typed patch object (${namespace ? `${namespace}/` : ""}${name}; ${apiVersionOf(type)}, Kind=${type.kind}): ${unknownField}: field not declared in schema`,
      );
    }
    if (metadata.name !== name) {
      throw badRequest(
        `the name of the object (${String(metadata.name)}) does not match the name on the URL (${name})`,
      );
    }
    const existing = this.bucket(type).get(objectKey(type.namespaced ? namespace : undefined, name));
    if (
      metadata.resourceVersion !== undefined &&
      metadata.resourceVersion !== (existing && metadataOf(existing).resourceVersion)
    ) {
      throw resourceVersionConflict(type.plural, type.group, name);
    }
    for (const field of [
      "resourceVersion",
      "uid",
      "creationTimestamp",
      "generation",
      "managedFields",
      "deletionTimestamp",
    ]) {
      delete metadata[field];
    }
    if (!existing) {
      if (options.subresource) throw notFound(type.plural, type.group, name);
      this.requireNamespace(type, metadata.namespace as string | undefined);
      checkName(type, name);
    }
    const scope = this.scope(type, options.subresource);
    let restricted: JsonObject = applied;
    if (scope === "main") {
      const { status: _ignored, ...rest } = applied;
      restricted = rest;
    } else if (scope === "status") {
      restricted = { status: applied.status ?? {} };
    }
    const merged = serverSideApply(existing, restricted, scope, {
      ...this.identity(type, options),
      force: options.force === true,
      kind: type.plural,
      name,
    });
    return this.commit(type, existing, merged, options);
  }

  /** Reads `spec.replicas` as an autoscaling/v1 Scale. */
  getScale(type: ResourceType, namespace: string | undefined, name: string): JsonObject {
    const object = this.find(type, namespace, name);
    return scaleOf(object);
  }

  /** Writes a Scale (PUT or merge patch on `/scale`) back to `spec.replicas` with ownership `subresource: scale`. */
  updateScale(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    change: (scale: JsonObject) => unknown,
    options: WriteOptions,
  ): JsonObject {
    const previous = this.find(type, namespace, name);
    const scale = change(scaleOf(previous));
    const replicas = isPlainObject(scale) && isPlainObject(scale.spec) ? scale.spec.replicas : undefined;
    if (typeof replicas !== "number" || !Number.isInteger(replicas) || replicas < 0) {
      throw invalid("Scale", "autoscaling", name, [
        { field: "spec.replicas", message: "must be a non-negative integer" },
      ]);
    }
    const requested =
      isPlainObject(scale) && isPlainObject(scale.metadata) ? scale.metadata.resourceVersion : undefined;
    if (requested && requested !== metadataOf(previous).resourceVersion) {
      throw resourceVersionConflict(type.plural, type.group, name);
    }
    const next = deepClone(previous);
    next.spec = { ...(isPlainObject(next.spec) ? next.spec : {}), replicas };
    const written = this.write(type, previous, next, { ...options, subresource: "scale" });
    return scaleOf(written);
  }

  /** Shared by update and non-apply patches: enforce the subresource, record ownership, commit. */
  private write(
    type: ResourceType,
    previous: JsonObject,
    proposed: JsonObject,
    options: WriteOptions,
  ): JsonObject {
    const scope = this.scope(type, options.subresource);
    let next: JsonObject;
    if (scope === "status") {
      next = deepClone(previous);
      if (proposed.status === undefined) delete next.status;
      else next.status = deepClone(proposed.status);
    } else {
      next = deepClone(proposed);
      const metadata = metadataOf(next);
      const before = metadataOf(previous);
      for (const field of ["name", "namespace", "uid", "creationTimestamp", "generation", "managedFields"]) {
        if (before[field] === undefined) delete metadata[field];
        else metadata[field] = deepClone(before[field]);
      }
      if (scope === "main") {
        if (previous.status === undefined) delete next.status;
        else next.status = deepClone(previous.status);
      }
    }
    // `scale` writes touch only spec.replicas, recorded like the real server: subresource "scale".
    recordUpdate(previous, next, scope === "status" ? "status" : scope, this.identity(type, options));
    return this.commit(type, previous, next, options);
  }

  private scope(type: ResourceType, subresource: string | undefined): FieldScope {
    if (subresource === "status") {
      if (!type.hasStatus) throw notFound(type.plural, type.group, "status");
      return "status";
    }
    return type.hasStatus ? "main" : "all";
  }

  private identity(type: ResourceType, options: WriteOptions) {
    return {
      manager: options.fieldManager || "unknown",
      apiVersion: apiVersionOf(type),
      ...(options.subresource ? { subresource: options.subresource } : {}),
      now: this.now(),
    };
  }

  /** The stored CRD's schema for a custom resource type's version. */
  private customSchema(type: ResourceType) {
    const crd = this.bucket(this.type("apiextensions.k8s.io/v1", "CustomResourceDefinition")).get(
      objectKey(undefined, typeKeyOf(type)),
    );
    return crd && crdSchema(crd, type.version);
  }

  /** Stamps server metadata, bumps generation and resourceVersion, stores and notifies (unless dry run). */
  private commit(
    type: ResourceType,
    previous: JsonObject | undefined,
    next: JsonObject,
    options: WriteOptions,
  ): JsonObject {
    if (previous) keepAllocatedValues(type, previous, next);
    applyDefaults(type, next, type.custom ? this.customSchema(type) : undefined, () => {
      const n = this.serviceIpCounter++;
      return `10.96.${Math.floor(n / 250)}.${(n % 250) + 1}`;
    });
    validate(type, next);
    if (previous) checkImmutableFields(type, previous, next);
    const metadata = metadataOf(next);
    const now = this.now()
      .toISOString()
      .replace(/\.\d{3}Z$/, "Z");
    if (previous) {
      const before = metadataOf(previous);
      metadata.uid = before.uid;
      metadata.creationTimestamp = before.creationTimestamp;
      if (type.tracksGeneration) {
        const specChanged = !deepEqual(withoutMetadataAndStatus(previous), withoutMetadataAndStatus(next));
        metadata.generation = (Number(before.generation) || 1) + (specChanged ? 1 : 0);
      }
      metadata.resourceVersion = before.resourceVersion;
      if (deepEqual(withoutVolatile(previous), withoutVolatile(next)))
        return this.withApiVersion(type, previous);
    } else {
      metadata.uid = randomUUID();
      metadata.creationTimestamp = now;
      if (type.tracksGeneration) metadata.generation = 1;
    }
    if (options.dryRun) {
      if (!previous) delete metadata.resourceVersion;
      return this.withApiVersion(type, next);
    }
    this.revision++;
    metadata.resourceVersion = String(this.revision);
    this.bucket(type).set(objectKey(metadata.namespace as string | undefined, metadata.name as string), next);
    this.emit(type, previous ? "MODIFIED" : "ADDED", next, previous);
    if (type.group === "apiextensions.k8s.io" && type.kind === "CustomResourceDefinition")
      this.registerCrd(next);
    return this.withApiVersion(type, next);
  }

  private registerCrd(crd: JsonObject): void {
    const types = typesFromCrd(crd);
    const status = (crd.status ?? {}) as JsonObject;
    const conditions = (Array.isArray(status.conditions) ? status.conditions : []) as JsonObject[];
    const servedAlready = types.every((type) =>
      this.registry
        .all()
        .some(
          (known) => known.group === type.group && known.version === type.version && known.kind === type.kind,
        ),
    );
    const name = String(metadataOf(crd).name);
    if (!servedAlready && this.crdEstablishMs > 0 && !conditions.some((c) => c.type === "Established")) {
      // A new CRD's kind is served a moment after the create answers, as on kube-apiserver (its
      // establishing controller): until then its custom resources get 404.
      const now = this.now()
        .toISOString()
        .replace(/\.\d{3}Z$/, "Z");
      const accepted = {
        type: "NamesAccepted",
        status: "True",
        reason: "NoConflicts",
        message: "no conflicts found",
        lastTransitionTime: now,
      };
      crd.status = {
        conditions: [accepted],
        acceptedNames: (crd.spec as JsonObject | undefined)?.names ?? {},
      };
      const type = this.type("apiextensions.k8s.io/v1", "CustomResourceDefinition");
      setTimeout(() => {
        const stored = this.bucket(type).get(objectKey(undefined, name));
        if (!stored) return;
        this.writeStatus(type, undefined, name, {
          ...(stored.status as JsonObject),
          conditions: [
            accepted,
            {
              type: "Established",
              status: "True",
              reason: "InitialNamesAccepted",
              message: "the initial names have been accepted",
              lastTransitionTime: now,
            },
          ],
        });
      }, this.crdEstablishMs).unref();
      return;
    }
    this.registry.register(types);
    const established = conditions.length > 0;
    if (!established) {
      const now = this.now()
        .toISOString()
        .replace(/\.\d{3}Z$/, "Z");
      crd.status = {
        conditions: [
          {
            type: "NamesAccepted",
            status: "True",
            reason: "NoConflicts",
            message: "no conflicts found",
            lastTransitionTime: now,
          },
          {
            type: "Established",
            status: "True",
            reason: "InitialNamesAccepted",
            message: "the initial names have been accepted",
            lastTransitionTime: now,
          },
        ],
        acceptedNames: (crd.spec as JsonObject | undefined)?.names ?? {},
        storedVersions:
          ((crd.spec as JsonObject | undefined)?.versions as JsonObject[] | undefined)
            ?.filter((v) => v.storage)
            .map((v) => v.name) ?? [],
      };
    }
  }

  private emit(
    type: ResourceType,
    eventType: WatchEventType,
    object: JsonObject,
    previous?: JsonObject,
  ): void {
    const event: StoredEvent = {
      type: eventType,
      resourceVersion: this.revision,
      typeKey: typeKeyOf(type),
      object: this.withApiVersion(type, object),
    };
    this.history.push(event);
    if (this.history.length > this.watchHistory) this.history.shift();
    for (const watcher of this.watchers) {
      if (watcher.typeKey !== event.typeKey) continue;
      if (watcher.namespace && metadataOf(event.object).namespace !== watcher.namespace) continue;
      const matchesNow = watcher.matches(event.object);
      const matchedBefore = previous !== undefined && watcher.matches(previous);
      // Like the real watch cache: an object entering a selector is ADDED, one leaving it DELETED.
      if (eventType === "MODIFIED" && matchesNow && !matchedBefore) watcher.send({ ...event, type: "ADDED" });
      else if (eventType === "MODIFIED" && !matchesNow && matchedBefore)
        watcher.send({ ...event, type: "DELETED" });
      else if (matchesNow) watcher.send(event);
    }
    for (const listener of this.listeners) listener(event);
  }

  delete(
    type: ResourceType,
    namespace: string | undefined,
    name: string,
    options: { dryRun?: boolean; propagationPolicy?: string } = {},
  ): KubeStatus | JsonObject {
    const object = this.find(type, namespace, name);
    const metadata = metadataOf(object);
    const details = { name, group: type.group, kind: type.plural, uid: metadata.uid as string };
    if (options.dryRun) return successStatus(details);
    const policy = options.propagationPolicy ?? "Background";
    if (!["Background", "Foreground", "Orphan"].includes(policy)) {
      throw badRequest(`propagationPolicy ${policy} is not one of Background, Foreground, Orphan`);
    }
    this.remove(type, object, policy);
    return successStatus(details);
  }

  deleteCollection(
    type: ResourceType,
    namespace: string | undefined,
    options: ListOptions & { dryRun?: boolean; propagationPolicy?: string },
  ): JsonObject {
    const { items } = this.list(type, namespace, {
      labelSelector: options.labelSelector ?? null,
      fieldSelector: options.fieldSelector ?? null,
    });
    if (!options.dryRun) {
      for (const item of items) {
        const metadata = metadataOf(item);
        const stored = this.bucket(type).get(
          objectKey(metadata.namespace as string | undefined, metadata.name as string),
        );
        if (stored) this.remove(type, stored, options.propagationPolicy ?? "Background");
      }
    }
    return {
      apiVersion: apiVersionOf(type),
      kind: `${type.kind}List`,
      metadata: { resourceVersion: this.currentResourceVersion() },
      items,
    };
  }

  private remove(type: ResourceType, object: JsonObject, policy: string): void {
    const metadata = metadataOf(object);
    const bucket = this.bucket(type);
    const key = objectKey(metadata.namespace as string | undefined, metadata.name as string);
    if (!bucket.has(key)) return;
    bucket.delete(key);
    this.revision++;
    const gone = deepClone(object);
    metadataOf(gone).resourceVersion = String(this.revision);
    this.emit(type, "DELETED", gone);

    if (type.group === "" && type.kind === "Namespace") {
      for (const other of this.registry.all()) {
        if (!other.namespaced) continue;
        for (const child of [...this.bucket(other).values()]) {
          if (metadataOf(child).namespace === metadata.name) this.remove(other, child, "Background");
        }
      }
    }
    if (type.kind === "CustomResourceDefinition" && type.group === "apiextensions.k8s.io") {
      const spec = (object.spec ?? {}) as JsonObject;
      const names = (spec.names ?? {}) as JsonObject;
      const removed = this.registry.unregister(String(spec.group), String(names.plural));
      const first = removed[0];
      if (first)
        for (const child of [...this.bucket(first).values()]) this.remove(first, child, "Background");
    }
    this.collectDependents(metadata.uid as string, policy);
  }

  /** Garbage collection by ownerReferences: delete dependents, or orphan them. */
  private collectDependents(ownerUid: string, policy: string): void {
    for (const type of this.registry.all()) {
      for (const dependent of [...this.bucket(type).values()]) {
        const references = metadataOf(dependent).ownerReferences;
        if (!Array.isArray(references) || !references.some((ref: JsonObject) => ref.uid === ownerUid))
          continue;
        if (policy === "Orphan") {
          const next = deepClone(dependent);
          const remaining = references.filter((ref: JsonObject) => ref.uid !== ownerUid);
          if (remaining.length > 0) metadataOf(next).ownerReferences = remaining;
          else delete metadataOf(next).ownerReferences;
          this.commit(type, dependent, next, {});
        } else {
          this.remove(type, dependent, policy);
        }
      }
    }
  }

  /**
   * Subscribes to changes of one type. `resourceVersion` unset or "0": first an ADDED event per
   * current object; otherwise replays history after it, or throws 410 Expired when it is too old.
   */
  watch(
    type: ResourceType,
    namespace: string | undefined,
    options: ListOptions & { resourceVersion?: string | null },
    send: (event: StoredEvent) => void,
  ): () => void {
    const labels = parseLabelSelector(options.labelSelector);
    const fields = parseFieldSelector(options.fieldSelector);
    const matches = (object: JsonObject) =>
      matchesLabels(metadataOf(object).labels as Record<string, string>, labels) &&
      matchesFields(object, fields);
    const typeKey = typeKeyOf(type);
    const requested = options.resourceVersion;
    const initial: StoredEvent[] = [];
    if (!requested || requested === "0") {
      for (const object of this.list(type, namespace, options).items) {
        initial.push({
          type: "ADDED",
          resourceVersion: Number(metadataOf(object).resourceVersion),
          typeKey,
          object,
        });
      }
    } else {
      const from = Number(requested);
      if (!Number.isFinite(from)) throw badRequest(`invalid resource version ${JSON.stringify(requested)}`);
      const oldest = this.history[0]?.resourceVersion ?? this.revision + 1;
      if (from < oldest - 1 && from < this.revision) {
        throw new ApiError(410, "Expired", `too old resource version: ${from} (${oldest - 1})`);
      }
      for (const event of this.history) {
        if (event.resourceVersion <= from || event.typeKey !== typeKey) continue;
        if (namespace && metadataOf(event.object).namespace !== namespace) continue;
        if (matches(event.object)) initial.push(event);
      }
    }
    const watcher: Watcher = { typeKey, matches, send, ...(namespace ? { namespace } : {}) };
    for (const event of initial) send(event);
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  /** Every stored object of a type (for the simulated controllers). */
  objectsOf(type: ResourceType): JsonObject[] {
    return [...this.bucket(type).values()].map((object) => this.withApiVersion(type, object));
  }

  /** Controller status write: bypasses ownership, still bumps resourceVersion and notifies. */
  writeStatus(type: ResourceType, namespace: string | undefined, name: string, status: JsonObject): void {
    const previous = this.bucket(type).get(objectKey(namespace, name));
    if (!previous || deepEqual(previous.status, status)) return;
    const next = deepClone(previous);
    next.status = deepClone(status);
    this.commit(type, previous, next, {});
  }
}

function withoutMetadataAndStatus(object: JsonObject): JsonObject {
  const { metadata: _m, status: _s, ...rest } = object;
  return rest;
}

/** Everything that makes a write a real change (managedFields timestamps alone do not). */
function withoutVolatile(object: JsonObject): JsonObject {
  const copy = deepClone(object);
  const metadata = metadataOf(copy);
  delete metadata.resourceVersion;
  if (Array.isArray(metadata.managedFields)) {
    metadata.managedFields = (metadata.managedFields as JsonObject[]).map(({ time: _t, ...rest }) => rest);
  }
  return copy;
}

function scaleOf(object: JsonObject): JsonObject {
  const metadata = metadataOf(object);
  const spec = (object.spec ?? {}) as JsonObject;
  const status = (object.status ?? {}) as JsonObject;
  const matchLabels = (isPlainObject(spec.selector) ? spec.selector.matchLabels : undefined) as
    Record<string, string> | undefined;
  return {
    kind: "Scale",
    apiVersion: "autoscaling/v1",
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      uid: metadata.uid,
      resourceVersion: metadata.resourceVersion,
      creationTimestamp: metadata.creationTimestamp,
    },
    spec: { replicas: spec.replicas ?? 0 },
    status: {
      replicas: status.replicas ?? 0,
      selector: Object.entries(matchLabels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(","),
    },
  };
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(`error decoding JSON: ${(error as Error).message}`);
  }
}

function encodeContinue(lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 1, k: lastKey })).toString("base64url");
}

function decodeContinue(token: string): string {
  try {
    const decoded = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as { k?: unknown };
    if (typeof decoded.k === "string") return decoded.k;
  } catch {
    // fall through to the error below
  }
  throw badRequest("continue key is not valid");
}
