/**
 * client-node's object API as the cluster port uses it (`kube-cluster.ts`): raw JSON in and out,
 * and a deadline on every request.
 */
import {
  ApiException,
  HttpMethod,
  KubernetesObjectApi,
  PatchStrategy,
  type Configuration,
  type KubernetesObject,
  type RequestContext,
  type ResponseContext,
} from "@kubernetes/client-node";
import { FIELD_MANAGER } from "../../reconciler/desired-state.js";
import type { KubeObject } from "../../reconciler/types.js";
import { dropSharedConnection, dropSharedRequestConnections } from "./shared-connection.js";

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** A request the API server did not answer in time. */
class RequestTimeoutError extends Error {
  constructor(timeoutMs: number, options: { cause: unknown }) {
    super(`no answer from the API server within ${Math.round(timeoutMs / 100) / 10} s`, options);
    this.name = "RequestTimeoutError";
  }
}

/**
 * A call through one of client-node's typed clients (Leases, /version), which take no signal, held
 * to the same deadline as the object API's requests: past it the cycle goes on without the answer.
 */
export async function withinDeadline<T>(timeoutMs: number, work: Promise<T>): Promise<T> {
  try {
    return await raceDeadline(timeoutMs, work);
  } catch (error) {
    // Its connection may have gone silent for good: the next request opens a new one.
    if (error instanceof RequestTimeoutError) dropSharedRequestConnections();
    throw error;
  }
}

async function raceDeadline<T>(timeoutMs: number, work: Promise<T>): Promise<T> {
  // The abandoned call may still fail later: that is no unhandled rejection.
  work.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RequestTimeoutError(timeoutMs, { cause: undefined })), timeoutMs);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * client-node's object API, with two changes that matter for GitOps: bodies go out as the
 * manifest's own JSON and answers come back as plain JSON. Its typed (de)serializer silently
 * drops every field its models do not know — a field newer than the client, a CRD-like extension,
 * a typo — so the cluster would quietly differ from Git. Discovery, auth and TLS stay client-node's.
 */
export class RawObjectApi extends KubernetesObjectApi {
  /** Every request's deadline (docs/reliability.md row 48); set by KubeCluster. */
  timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS;

  discover(apiVersion: string, kind: string) {
    return this.resource(apiVersion, kind);
  }

  /** The names discovery lists for a group version (subresources too: `certificates/status`), once discovered. */
  discoveredNames(apiVersion: string): string[] {
    return (this.apiVersionResourceCache[apiVersion]?.resources ?? []).map((resource) => resource.name);
  }

  /** GET of any API path, answered as plain JSON (discovery documents, raw lists). */
  async getJson(path: string): Promise<unknown> {
    const request = this.configuration.baseServer.makeRequestContext(path, HttpMethod.GET);
    request.setHeaderParam("Accept", "application/json");
    return this.requestPromise(request);
  }

  // Without a deadline a frozen API server (or etcd behind it) holds a request, and so the whole
  // cycle, forever: the socket stays open and no error ever comes.
  protected override async requestPromise<T extends KubernetesObject>(
    request: RequestContext,
    type?: string,
    options?: Configuration,
  ): Promise<T> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    request.setSignal(signal);
    try {
      return await super.requestPromise<T>(request, type, options);
    } catch (error) {
      if (signal.aborted) {
        dropSharedConnection(request.getDispatcher());
        throw new RequestTimeoutError(this.timeoutMs, { cause: error });
      }
      throw error;
    }
  }

  async serverSideApply(object: KubeObject, dryRun: boolean): Promise<KubeObject> {
    // specUriPath lowercases the whole path, name included: a name with capitals ("Web") then met
    // "does not match the name on the URL (web)" on a real API server instead of the name's own
    // validation error. The name goes on the URL as written.
    const lowered = await this.specUriPath(object as KubernetesObject, "patch");
    const path = `${lowered.slice(0, lowered.lastIndexOf("/") + 1)}${encodeURIComponent(object.metadata.name)}`;
    const request = this.configuration.baseServer.makeRequestContext(path, HttpMethod.PATCH);
    request.setHeaderParam("Accept", "application/json");
    request.setHeaderParam("Content-Type", PatchStrategy.ServerSideApply);
    if (dryRun) request.setQueryParam("dryRun", "All");
    request.setQueryParam("fieldManager", FIELD_MANAGER);
    // force: Git wins over hand edits (self-heal), as Flux and Argo CD's server-side apply do.
    request.setQueryParam("force", "true");
    request.setBody(JSON.stringify(object));
    return (await this.requestPromise(request)) as unknown as KubeObject;
  }

  protected override async processResponse<T extends KubernetesObject>(
    response: ResponseContext,
  ): Promise<T> {
    const text = await response.body.text();
    if (response.httpStatusCode >= 200 && response.httpStatusCode <= 299) return JSON.parse(text) as T;
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the plain-text body
    }
    throw new ApiException(response.httpStatusCode, "Unsuccessful HTTP Request", body, response.headers);
  }
}
