/**
 * Any kind's objects by apiVersion and kind, as the cluster port uses them (`kube-cluster.ts`):
 * discovery names each kind's resource and scope, and objects go out as the manifest's own JSON and
 * come back as plain JSON, every field kept — a field newer than any client's models, a CRD's
 * extension, a typo the server should refuse — so the cluster never quietly differs from Git.
 */
import { FIELD_MANAGER } from "../../reconciler/desired-state.js";
import type { KubeObject } from "../../reconciler/types.js";
import type { KubeTransport } from "./kube-transport.js";

/** One kind as discovery lists it. */
export interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

interface ApiResourceList {
  resources?: ApiResource[];
}

/** An object's identity: what its path is made of. */
export interface ObjectHeader {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
}

/** Where an object without a namespace goes when its kind is namespaced (kubectl's default). */
const DEFAULT_NAMESPACE = "default";

export function apiVersionPath(apiVersion: string): string {
  return apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

export class KubeObjects {
  /** Each group version's resource list, as long as the process lives (asked again for a kind it lacks). */
  private readonly discovered = new Map<string, Promise<ApiResourceList>>();

  constructor(readonly transport: KubeTransport) {}

  /** GET of any API path, answered as plain JSON (discovery documents, raw lists, /version). */
  getJson(path: string, query?: Record<string, string | number | undefined>): Promise<unknown> {
    return this.transport.request({ method: "GET", path, ...(query ? { query } : {}) });
  }

  private resourceList(apiVersion: string, fresh: boolean): Promise<ApiResourceList> {
    let list = this.discovered.get(apiVersion);
    if (!list || fresh) {
      const asked = this.getJson(apiVersionPath(apiVersion)) as Promise<ApiResourceList>;
      list = asked;
      this.discovered.set(apiVersion, asked);
      asked.catch(() => {
        if (this.discovered.get(apiVersion) === asked) this.discovered.delete(apiVersion);
      });
    }
    return list;
  }

  /** The kind's resource, or undefined when its group version does not serve it (a 404 when it serves no such version). */
  async discover(apiVersion: string, kind: string): Promise<ApiResource | undefined> {
    const known = (await this.resourceList(apiVersion, false)).resources?.find(
      (entry) => entry.kind === kind,
    );
    if (known) return known;
    // A kind its group version lacked when asked (a CRD established since) is asked for again.
    return (await this.resourceList(apiVersion, true)).resources?.find((entry) => entry.kind === kind);
  }

  /** The names discovery lists for a group version (subresources too: `certificates/status`), once discovered. */
  async discoveredNames(apiVersion: string): Promise<string[]> {
    return ((await this.resourceList(apiVersion, false)).resources ?? []).map((entry) => entry.name);
  }

  /** `/apis/GROUP/VERSION[/namespaces/NS]/RESOURCE[/NAME]`, names as written. */
  async pathOf(header: ObjectHeader, withName = true): Promise<string> {
    const resource = await this.discover(header.apiVersion, header.kind);
    if (!resource) throw new Error(`Unrecognized API version and kind: ${header.apiVersion} ${header.kind}`);
    let path = apiVersionPath(header.apiVersion);
    if (resource.namespaced)
      path += `/namespaces/${encodeURIComponent(header.metadata.namespace || DEFAULT_NAMESPACE)}`;
    path += `/${resource.name}`;
    return withName ? `${path}/${encodeURIComponent(header.metadata.name)}` : path;
  }

  async read(header: ObjectHeader): Promise<KubeObject> {
    return (await this.getJson(await this.pathOf(header))) as KubeObject;
  }

  /** Server-side apply as field manager `ferry`, forced: Git wins over hand edits (self-heal), as Flux and Argo CD's do. */
  async serverSideApply(object: KubeObject, dryRun: boolean): Promise<KubeObject> {
    return (await this.transport.request({
      method: "PATCH",
      path: await this.pathOf(object),
      query: { ...(dryRun ? { dryRun: "All" } : {}), fieldManager: FIELD_MANAGER, force: "true" },
      contentType: "application/apply-patch+yaml",
      body: JSON.stringify(object),
    })) as KubeObject;
  }

  async delete(header: ObjectHeader, propagationPolicy: string): Promise<void> {
    await this.transport.request({
      method: "DELETE",
      path: await this.pathOf(header),
      query: { propagationPolicy },
    });
  }

  /** One page of a kind's objects (in `namespace`, or everywhere), with the token of the next. */
  async listPage(
    apiVersion: string,
    kind: string,
    namespace: string | undefined,
    query: { labelSelector: string; limit: number; continue?: string },
  ): Promise<{ items: KubeObject[]; continue: string | undefined }> {
    const resource = await this.discover(apiVersion, kind);
    if (!resource) throw new Error(`Unrecognized API version and kind: ${apiVersion} ${kind}`);
    const scope = resource.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
    const page = (await this.getJson(`${apiVersionPath(apiVersion)}${scope}/${resource.name}`, query)) as {
      items?: KubeObject[];
      metadata?: { continue?: string };
    };
    return { items: page.items ?? [], continue: page.metadata?.continue || undefined };
  }
}
