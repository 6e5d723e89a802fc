/**
 * Everything in one namespace, whatever its kind: what the namespace controller would delete with
 * the Namespace. Discovery (`/api/v1`, `/apis` and each group's preferred version) names every
 * namespaced kind that can be listed; each is then listed in the namespace, page by page.
 */
import type { NamespaceContents } from "../../reconciler/ports.js";
import type { KubeObject } from "../../reconciler/types.js";

type GetJson = (path: string) => Promise<unknown>;
/** Whether the error is the API server's 403: the kind exists, but these credentials may not list it. */
type IsForbidden = (error: unknown) => boolean;

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
}

interface ListedKind {
  apiVersion: string;
  kind: string;
  /** `/api/v1/namespaces/NS/configmaps` */
  path: string;
}

/** Events are a record of what happened, not content anyone would miss. */
const SKIPPED = new Set(["v1 Event", "events.k8s.io/v1 Event"]);

async function listedKinds(getJson: GetJson, namespace: string): Promise<ListedKind[]> {
  const groupVersions = ["v1"];
  const groups = (await getJson("/apis")) as { groups?: { preferredVersion?: { groupVersion?: string } }[] };
  for (const group of groups.groups ?? []) {
    if (group.preferredVersion?.groupVersion) groupVersions.push(group.preferredVersion.groupVersion);
  }
  const kinds: ListedKind[] = [];
  for (const apiVersion of groupVersions) {
    const base = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const list = (await getJson(base)) as { resources?: ApiResource[] };
    for (const resource of list.resources ?? []) {
      // Subresources (`pods/log`) are not objects; kinds that cannot be listed cannot hold any.
      if (!resource.namespaced || resource.name.includes("/")) continue;
      if (!(resource.verbs ?? []).includes("list") || SKIPPED.has(`${apiVersion} ${resource.kind}`)) continue;
      kinds.push({
        apiVersion,
        kind: resource.kind,
        path: `${base}/namespaces/${encodeURIComponent(namespace)}/${resource.name}`,
      });
    }
  }
  return kinds;
}

export async function listNamespaceContents(
  getJson: GetJson,
  isForbidden: IsForbidden,
  namespace: string,
  pageSize: number,
): Promise<NamespaceContents> {
  const contents: NamespaceContents = { objects: [], unreadable: [] };
  for (const { apiVersion, kind, path } of await listedKinds(getJson, namespace)) {
    let continueToken: string | undefined;
    do {
      const query = `limit=${pageSize}${continueToken ? `&continue=${encodeURIComponent(continueToken)}` : ""}`;
      let page: { items?: KubeObject[]; metadata?: { continue?: string } };
      try {
        page = (await getJson(`${path}?${query}`)) as typeof page;
      } catch (error) {
        if (!isForbidden(error)) throw error;
        contents.unreadable.push(`${kind} (${apiVersion})`);
        break;
      }
      for (const item of page.items ?? []) contents.objects.push({ ...item, apiVersion, kind });
      continueToken = page.metadata?.continue || undefined;
    } while (continueToken);
  }
  return contents;
}
