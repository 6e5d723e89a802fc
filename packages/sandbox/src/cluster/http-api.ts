/**
 * The HTTP face of the simulator: discovery, REST routing onto `ClusterState`, watch streams,
 * `Table` answers for kubectl, bearer-token auth, the request log and fault injection.
 *
 * Not served (kubectl falls back or needs a flag): aggregated discovery (kubectl falls back to
 * /api and /apis), OpenAPI schemas (`/openapi/v3` lists operations only, so kubectl leaves field
 * validation to the server, which does not check unknown fields; `/openapi/v2` is 404, so
 * `kubectl explain` does not work), protobuf (JSON is always answered; protobuf request bodies, which
 * kubectl's typed generators such as `kubectl create namespace` send, get 415 — use
 * `kubectl create -f` / `apply` instead), the old `/api/v1/watch/…` paths.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError, badRequest, methodNotAllowed, unsupportedMediaType, type KubeStatus } from "./status.js";
import { ClusterState, PATCH_CONTENT_TYPES, parseJson, type StoredEvent } from "./cluster-state.js";
import { ALL_VERBS, apiVersionOf, type ResourceType } from "./resource-types.js";
import { ClusterFaults, reasonForStatus, type RequestRecord, type RequestVerb } from "./faults.js";
import { parse as parseYaml } from "yaml";
import { applyMergePatch, isPlainObject, metadataOf, type JsonObject } from "./patches.js";

/** Bodies above this are refused with 413, like the real server's 3 MiB limit. */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

interface Route {
  type: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
}

export interface HttpApiOptions {
  state: ClusterState;
  faults: ClusterFaults;
  token: string;
  log: RequestRecord[];
  address: () => string;
}

export class HttpApi {
  private readonly openStreams = new Set<ServerResponse>();

  constructor(private readonly options: HttpApiOptions) {}

  /** Ends every open watch (on close). */
  endStreams(): void {
    for (const response of this.openStreams) response.end();
    this.openStreams.clear();
  }

  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? "/", "http://simulator");
    const record: RequestRecord = {
      method: request.method ?? "GET",
      path: url.pathname,
      verb: "discovery",
      dryRun: url.searchParams.getAll("dryRun").includes("All"),
    };
    try {
      // A wrong token is refused; a missing one is let in, because kubectl (client-go) does not
      // send bearer tokens to a plain-http server and the simulator only listens on loopback.
      const authorization = request.headers.authorization;
      if (authorization !== undefined && authorization !== `Bearer ${this.options.token}`) {
        throw new ApiError(401, "Unauthorized", "Unauthorized");
      }
      const latency = this.options.faults.currentLatency();
      if (latency > 0) await new Promise((resolve) => setTimeout(resolve, latency));
      const discovery = this.discovery(url.pathname);
      if (discovery !== undefined) {
        this.options.log.push(record);
        if (request.method !== "GET") throw methodNotAllowed();
        record.status = 200;
        return sendJson(response, 200, discovery);
      }
      const route = this.route(url.pathname);
      record.verb = verbOf(request.method ?? "GET", route, url);
      record.resource = route.type.plural;
      if (route.namespace) record.namespace = route.namespace;
      if (route.name) record.name = route.name;
      if (route.subresource) record.subresource = route.subresource;
      const fieldManager = url.searchParams.get("fieldManager");
      if (fieldManager) record.fieldManager = fieldManager;
      const contentType = (request.headers["content-type"] ?? "").split(";")[0]!.trim();
      if (record.verb === "patch") record.patchType = PATCH_CONTENT_TYPES[contentType] ?? contentType;
      this.options.log.push(record);

      const fault = this.options.faults.take(record);
      if (fault) {
        throw new ApiError(
          fault.status,
          reasonForStatus(fault.status),
          fault.message ?? `injected fault: ${record.verb} ${record.resource} failed`,
        );
      }
      const body = ["POST", "PUT", "PATCH", "DELETE"].includes(record.method) ? await readBody(request) : "";
      if (record.verb === "watch") {
        record.status = 200;
        return this.watch(route, url, request, response);
      }
      // Server-side apply answers 201 when it created the object, like a POST.
      const applyCreates =
        record.patchType === "apply" &&
        !this.options.state.exists(route.type, route.namespace, route.name ?? "");
      const result = this.execute(record, route, url, body, contentType, request.headers["user-agent"]);
      const status = (record.verb === "create" || applyCreates) && !record.dryRun ? 201 : 200;
      record.status = status;
      const accept = request.headers.accept ?? "";
      if ((record.verb === "get" || record.verb === "list") && accept.includes("as=Table")) {
        return sendJson(response, 200, toTable(result, record.verb === "list"));
      }
      return sendJson(response, status, result);
    } catch (error) {
      const apiError =
        error instanceof ApiError
          ? error
          : new ApiError(500, "InternalError", `internal error: ${(error as Error).message}`);
      record.status = apiError.code;
      if (!this.options.log.includes(record)) this.options.log.push(record);
      const headers: Record<string, string> = apiError.code === 429 ? { "retry-after": "1" } : {};
      return sendJson(response, apiError.code, apiError.toStatus(), headers);
    }
  }

  private discovery(path: string): unknown {
    const state = this.options.state;
    const trimmed = path.replace(/\/+$/, "") || "/";
    if (trimmed === "/version") {
      return {
        major: "1",
        minor: "32",
        gitVersion: "v1.32.0-ferry-simulator",
        gitCommit: "simulated",
        gitTreeState: "clean",
        buildDate: "2025-01-01T00:00:00Z",
        goVersion: "go1.23",
        compiler: "gc",
        platform: "linux/amd64",
      };
    }
    if (isHealthPath(trimmed)) return "ok";
    if (trimmed === "/openapi/v3") {
      const paths: JsonObject = {};
      for (const { group, versions } of state.registry.groupVersions()) {
        for (const version of versions) {
          const prefix = group ? `apis/${group}/${version}` : `api/${version}`;
          paths[prefix] = {
            serverRelativeURL: `/openapi/v3/${prefix}?hash=${state.currentResourceVersion()}`,
          };
        }
      }
      return { paths };
    }
    const openApiMatch = /^\/openapi\/v3\/(api\/v1|apis\/[^/]+\/[^/]+)$/.exec(trimmed);
    if (openApiMatch) return this.openApiDocument(openApiMatch[1]!);
    if (trimmed === "/api") {
      return {
        kind: "APIVersions",
        versions: ["v1"],
        serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: this.options.address() }],
      };
    }
    const groupEntry = (group: string, versions: string[]) => ({
      name: group,
      versions: versions.map((version) => ({ groupVersion: `${group}/${version}`, version })),
      preferredVersion: { groupVersion: `${group}/${versions[0]}`, version: versions[0] },
    });
    if (trimmed === "/apis") {
      const groups = state.registry.groupVersions().filter((g) => g.group !== "");
      return {
        kind: "APIGroupList",
        apiVersion: "v1",
        groups: groups.map((g) => groupEntry(g.group, g.versions)),
      };
    }
    const groupMatch = /^\/apis\/([^/]+)$/.exec(trimmed);
    if (groupMatch) {
      const found = state.registry.groupVersions().find((g) => g.group === groupMatch[1]);
      if (!found) return undefined;
      return { kind: "APIGroup", apiVersion: "v1", ...groupEntry(found.group, found.versions) };
    }
    const versionMatch = /^\/api\/(v1)$/.exec(trimmed) ?? /^\/apis\/([^/]+\/[^/]+)$/.exec(trimmed);
    if (versionMatch) {
      const groupVersion = versionMatch[1]!;
      const types = state.registry.all().filter((t) => apiVersionOf(t) === groupVersion);
      if (types.length === 0) return undefined;
      const resources: JsonObject[] = [];
      for (const type of types) {
        resources.push({
          name: type.plural,
          singularName: type.singular,
          namespaced: type.namespaced,
          kind: type.kind,
          verbs: ALL_VERBS,
          ...(type.shortNames.length ? { shortNames: type.shortNames } : {}),
          ...(type.categories ? { categories: type.categories } : {}),
        });
        if (type.hasStatus) {
          resources.push({
            name: `${type.plural}/status`,
            singularName: "",
            namespaced: type.namespaced,
            kind: type.kind,
            verbs: ["get", "patch", "update"],
          });
        }
        if (type.hasScale) {
          resources.push({
            name: `${type.plural}/scale`,
            singularName: "",
            namespaced: type.namespaced,
            group: "autoscaling",
            version: "v1",
            kind: "Scale",
            verbs: ["get", "patch", "update"],
          });
        }
      }
      return { kind: "APIResourceList", apiVersion: "v1", groupVersion, resources };
    }
    return undefined;
  }

  /**
   * A skeleton OpenAPI v3 document per group version: no schemas, only the operations with their
   * group-version-kind and the `fieldValidation` parameter — enough for kubectl to hand
   * validation to the server (which accepts every field) instead of demanding `--validate=false`.
   */
  private openApiDocument(prefix: string): JsonObject | undefined {
    const groupVersion = prefix.replace(/^apis?\//, "");
    const types = this.options.state.registry.all().filter((t) => apiVersionOf(t) === groupVersion);
    if (types.length === 0) return undefined;
    const parameters = ["fieldValidation", "fieldManager", "dryRun"].map((name) => ({
      name,
      in: "query",
      schema: { type: "string" },
    }));
    const paths: JsonObject = {};
    for (const type of types) {
      const gvk = { group: type.group, version: type.version, kind: type.kind };
      const operation = (action: string) => ({
        operationId: `${action}${type.kind}`,
        parameters,
        responses: { "200": { description: "OK" } },
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
      });
      const base = `/${prefix}${type.namespaced ? "/namespaces/{namespace}" : ""}/${type.plural}`;
      paths[base] = { get: operation("list"), post: operation("post") };
      paths[`${base}/{name}`] = {
        get: operation("get"),
        put: operation("put"),
        patch: operation("patch"),
        delete: operation("delete"),
      };
    }
    return {
      openapi: "3.0.0",
      info: { title: "Kubernetes", version: "v1.32.0" },
      paths,
      components: { schemas: {} },
    };
  }

  private route(path: string): Route {
    const segments = path
      .split("/")
      .filter((s) => s !== "")
      .map(decodeURIComponent);
    let group: string;
    let version: string;
    let rest: string[];
    if (segments[0] === "api" && segments.length >= 3) {
      group = "";
      version = segments[1]!;
      rest = segments.slice(2);
    } else if (segments[0] === "apis" && segments.length >= 4) {
      group = segments[1]!;
      version = segments[2]!;
      rest = segments.slice(3);
    } else {
      throw new ApiError(404, "NotFound", "the server could not find the requested resource");
    }
    const registry = this.options.state.registry;
    if (rest[0] === "namespaces" && rest.length >= 3) {
      const namespacedType = registry.byPlural(group, version, rest[2]!);
      if (namespacedType?.namespaced) {
        return withParts(namespacedType, rest[1], rest[3], rest[4], rest.length > 5);
      }
    }
    const type = registry.byPlural(group, version, rest[0]!);
    if (!type) throw new ApiError(404, "NotFound", "the server could not find the requested resource");
    return withParts(type, undefined, rest[1], rest[2], rest.length > 3);
  }

  private execute(
    record: RequestRecord,
    route: Route,
    url: URL,
    body: string,
    contentType: string,
    userAgent: string | undefined,
  ): unknown {
    const state = this.options.state;
    const { type, namespace, name, subresource } = route;
    const dryRun = record.dryRun;
    const fieldManager = record.fieldManager ?? defaultManager(userAgent);
    const write = { dryRun, fieldManager, ...(subresource ? { subresource } : {}) };
    const listOptions = {
      labelSelector: url.searchParams.get("labelSelector"),
      fieldSelector: url.searchParams.get("fieldSelector"),
      limit: Number(url.searchParams.get("limit") ?? 0),
      continueToken: url.searchParams.get("continue"),
    };
    if (subresource && subresource !== "status" && subresource !== "scale") {
      throw new ApiError(404, "NotFound", "the server could not find the requested resource");
    }
    if (subresource === "scale" && !type.hasScale)
      throw new ApiError(404, "NotFound", "the server could not find the requested resource");
    switch (record.verb) {
      case "get":
        return subresource === "scale"
          ? state.getScale(type, namespace, name!)
          : state.get(type, namespace, name!);
      case "list": {
        const list = state.list(type, namespace, listOptions);
        return {
          apiVersion: apiVersionOf(type),
          kind: `${type.kind}List`,
          metadata: {
            resourceVersion: list.resourceVersion,
            ...(list.continueToken
              ? { continue: list.continueToken, remainingItemCount: list.remainingItemCount }
              : {}),
          },
          items: list.items,
        };
      }
      case "create":
        if (name) throw methodNotAllowed();
        return state.create(type, namespace, parseJsonOrYaml(body, contentType), write);
      case "update":
        if (subresource === "scale") {
          const scale = parseJsonOrYaml(body, contentType);
          return state.updateScale(type, namespace, name!, () => scale, write);
        }
        return state.update(type, namespace, name!, parseJsonOrYaml(body, contentType), write);
      case "patch": {
        const patchType = PATCH_CONTENT_TYPES[contentType];
        if (!patchType) throw unsupportedMediaType(contentType);
        if (subresource === "scale") {
          if (patchType === "apply") throw unsupportedMediaType(contentType);
          const patch = parseJson(body);
          return state.updateScale(type, namespace, name!, (scale) => applyMergePatch(scale, patch), write);
        }
        const force = url.searchParams.get("force") === "true";
        if (force && patchType !== "apply")
          throw badRequest("force may not be specified for non-apply patch");
        return state.patch(type, namespace, name!, patchType, body, {
          ...write,
          force,
          ...(record.fieldManager ? {} : patchType === "apply" ? { fieldManager: "" } : {}),
        });
      }
      case "delete":
      case "deletecollection": {
        const options = body.trim() ? parseJson(body) : {};
        const deleteOptions = isPlainObject(options) ? options : {};
        const propagationPolicy =
          url.searchParams.get("propagationPolicy") ??
          (deleteOptions.propagationPolicy as string | undefined);
        const bodyDryRun = Array.isArray(deleteOptions.dryRun) && deleteOptions.dryRun.includes("All");
        if (bodyDryRun) record.dryRun = true;
        const opts = { dryRun: record.dryRun, ...(propagationPolicy ? { propagationPolicy } : {}) };
        if (record.verb === "delete") return state.delete(type, namespace, name!, opts);
        return state.deleteCollection(type, namespace, { ...listOptions, ...opts });
      }
      default:
        throw methodNotAllowed();
    }
  }

  private watch(route: Route, url: URL, request: IncomingMessage, response: ServerResponse): void {
    const state = this.options.state;
    const send = (line: unknown) => response.write(`${JSON.stringify(line)}\n`);
    const fieldSelector = route.name
      ? [url.searchParams.get("fieldSelector"), `metadata.name=${route.name}`].filter(Boolean).join(",")
      : url.searchParams.get("fieldSelector");
    let unsubscribe = () => {};
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      unsubscribe();
      if (timer) clearTimeout(timer);
      this.openStreams.delete(response);
      if (!response.writableEnded) response.end();
    };
    response.writeHead(200, {
      "content-type": "application/json",
      "cache-control": "no-cache, private",
      "transfer-encoding": "chunked",
    });
    response.flushHeaders();
    this.openStreams.add(response);
    try {
      unsubscribe = state.watch(
        route.type,
        route.namespace,
        {
          labelSelector: url.searchParams.get("labelSelector"),
          fieldSelector,
          resourceVersion: url.searchParams.get("resourceVersion"),
        },
        (event: StoredEvent) => send({ type: event.type, object: event.object }),
      );
    } catch (error) {
      // The real server reports an expired resourceVersion inside the stream, as an ERROR event.
      const status =
        error instanceof ApiError
          ? error.toStatus()
          : new ApiError(500, "InternalError", String(error)).toStatus();
      send({ type: "ERROR", object: status });
      return finish();
    }
    const timeoutSeconds = Number(url.searchParams.get("timeoutSeconds") ?? 0);
    if (timeoutSeconds > 0) timer = setTimeout(finish, timeoutSeconds * 1000);
    request.on("close", finish);
    response.on("close", finish);
  }
}

function withParts(
  type: ResourceType,
  namespace: string | undefined,
  name: string | undefined,
  subresource: string | undefined,
  tooLong: boolean,
): Route {
  if (tooLong) throw new ApiError(404, "NotFound", "the server could not find the requested resource");
  return {
    type,
    ...(namespace !== undefined ? { namespace } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(subresource !== undefined ? { subresource } : {}),
  };
}

function isHealthPath(path: string): boolean {
  return path === "/healthz" || path === "/livez" || path === "/readyz";
}

function verbOf(method: string, route: Route, url: URL): RequestVerb {
  const watch = url.searchParams.get("watch");
  switch (method) {
    case "GET":
      if (watch === "true" || watch === "1") return "watch";
      return route.name ? "get" : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return route.name ? "delete" : "deletecollection";
    default:
      throw methodNotAllowed();
  }
}

/** The real server names an unnamed writer after its user agent (`kubectl`, `node-fetch`, …). */
function defaultManager(userAgent: string | undefined): string {
  const product = (userAgent ?? "").split("/")[0]?.trim();
  return product || "unknown";
}

function parseJsonOrYaml(body: string, contentType: string): unknown {
  if (contentType === "application/yaml") return parseYaml(body);
  if (contentType !== "" && contentType !== "application/json") throw unsupportedMediaType(contentType);
  return parseJson(body);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES)
      throw new ApiError(413, "RequestEntityTooLarge", "the request body is too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

function age(creationTimestamp: unknown): string {
  const seconds = Math.max(0, Math.floor((Date.now() - Date.parse(String(creationTimestamp))) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

/** Extra columns kubectl shows for the kinds people look at in the sandbox (between Name and Age). */
const EXTRA_COLUMNS: Record<string, { name: string; cell: (object: JsonObject) => unknown }[]> = {
  Deployment: [
    { name: "Ready", cell: (o) => `${num(o, "readyReplicas")}/${num(o, "replicas", "spec")}` },
    { name: "Up-to-date", cell: (o) => num(o, "updatedReplicas") },
    { name: "Available", cell: (o) => num(o, "availableReplicas") },
  ],
  ReplicaSet: [
    { name: "Desired", cell: (o) => num(o, "replicas", "spec") },
    { name: "Current", cell: (o) => num(o, "replicas") },
    { name: "Ready", cell: (o) => num(o, "readyReplicas") },
  ],
  StatefulSet: [{ name: "Ready", cell: (o) => `${num(o, "readyReplicas")}/${num(o, "replicas", "spec")}` }],
  Pod: [
    {
      name: "Ready",
      cell: (o) => {
        const statuses = ((o.status as JsonObject | undefined)?.containerStatuses ?? []) as JsonObject[];
        return `${statuses.filter((c) => c.ready).length}/${statuses.length}`;
      },
    },
    {
      name: "Status",
      cell: (o) => {
        const statuses = ((o.status as JsonObject | undefined)?.containerStatuses ?? []) as JsonObject[];
        const waiting = statuses
          .map((c) => ((c.state as JsonObject | undefined)?.waiting as JsonObject | undefined)?.reason)
          .find(Boolean);
        return waiting ?? (o.status as JsonObject | undefined)?.phase ?? "Pending";
      },
    },
  ],
  Service: [
    { name: "Type", cell: (o) => (o.spec as JsonObject | undefined)?.type ?? "" },
    { name: "Cluster-IP", cell: (o) => (o.spec as JsonObject | undefined)?.clusterIP ?? "" },
  ],
  Namespace: [{ name: "Status", cell: (o) => (o.status as JsonObject | undefined)?.phase ?? "" }],
  PersistentVolumeClaim: [
    { name: "Status", cell: (o) => (o.status as JsonObject | undefined)?.phase ?? "Pending" },
  ],
};

function num(object: JsonObject, field: string, part: "status" | "spec" = "status"): number {
  return Number((object[part] as JsonObject | undefined)?.[field] ?? 0);
}

/** The `meta.k8s.io/v1` Table kubectl asks for (`Accept: …;as=Table`): Name, kind-specific columns, Age. */
function toTable(result: unknown, isList: boolean): JsonObject {
  const objects = isList ? (((result as JsonObject).items ?? []) as JsonObject[]) : [result as JsonObject];
  const kind = isList
    ? String((result as JsonObject).kind).replace(/List$/, "")
    : String((result as JsonObject).kind);
  const extra = EXTRA_COLUMNS[kind] ?? [];
  const column = (name: string, format = "") => ({
    name,
    type: "string",
    format,
    description: name,
    priority: 0,
  });
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: {
      resourceVersion: isList
        ? ((result as JsonObject).metadata as JsonObject).resourceVersion
        : metadataOf(result as JsonObject).resourceVersion,
    },
    columnDefinitions: [column("Name", "name"), ...extra.map((c) => column(c.name)), column("Age")],
    rows: objects.map((object) => ({
      cells: [
        metadataOf(object).name,
        ...extra.map((c) => c.cell(object)),
        age(metadataOf(object).creationTimestamp),
      ],
      object: { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: object.metadata },
    })),
  };
}

export type { KubeStatus };
