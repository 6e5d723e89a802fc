/**
 * The observe step: rendered objects → the desired state and everything the plan needs to know
 * about the cluster (live objects, dry-run results, the stored inventory, orphans' live state).
 * Reads only; throws on any error, because a partial picture must never drive a prune.
 */
import { UserError } from "../core/errors.js";
import { confine, refusalReason, type RefusedObject } from "./confinement.js";
import type { CycleSettings } from "./cycle-settings.js";
import { INSTANCE_LABEL, prepareDesiredState, scopeResolver, type DesiredObject } from "./desired-state.js";
import type { DiffMemory } from "./diff-memory.js";
import { forEachLimited } from "./for-each-limited.js";
import { readInventory, type StoredInventory } from "./inventory.js";
import { describeRef, inventoryKey, refOf } from "./object-ref.js";
import type { RenderedObject } from "./parse-manifests.js";
import type { ObservedObject } from "./plan.js";
import type { ClusterPort } from "./ports.js";
import { forbiddenReason, isForbidden, RbacRefusals } from "./rbac-refusals.js";
import { hookOf, syncWaveOf } from "./sync-options.js";
import type { KubeObject, ObjectRef } from "./types.js";

export interface Observation {
  desired: DesiredObject[];
  observed: Map<string, ObservedObject>;
  inventory: ObjectRef[];
  /** The stored inventory as read. */
  stored: StoredInventory;
  orphansLive: Map<string, KubeObject | undefined>;
  /** Rendered objects outside the confinement: neither looked at, applied nor pruned. */
  refused: RefusedObject[];
  /** Inventory members outside the confinement, by inventory key: kept, never looked up. */
  outOfScope: Map<string, string>;
  /** Rendered hooks (`helm.sh/hook`, `argocd.argoproj.io/hook`): not supported, so never applied. */
  hooks: string[];
}

/** Reads everything the plan needs. Throws on any error: a partial picture must never drive a prune. */
export async function observe(
  cluster: ClusterPort,
  settings: CycleSettings,
  rendered: RenderedObject[],
  memory: DiffMemory | undefined,
  /** The API server's version; with the inventory's uid it says whether the stored dry-run memory is this server's. */
  serverVersion?: string,
): Promise<Observation> {
  const concurrency = settings.concurrency ?? 8;
  // Hooks are not supported (README "Reconciler"): set aside, never applied, named in the cycle's notes.
  const hooks: string[] = [];
  rendered = rendered.filter(({ object }) => {
    const hook = hookOf(object);
    if (hook) hooks.push(`${object.kind} ${object.metadata.name} (${hook})`);
    return !hook;
  });
  const scopes = new Map<string, boolean | undefined>();
  for (const { object } of rendered) {
    const key = `${object.apiVersion} ${object.kind}`;
    if (!scopes.has(key)) scopes.set(key, await cluster.isNamespaced(object.apiVersion, object.kind));
  }
  const isNamespaced = scopeResolver(
    rendered.map(({ object }) => object),
    (apiVersion, kind) => scopes.get(`${apiVersion} ${kind}`),
  );
  const { allowed: confined, refused } = confine(
    prepareDesiredState(rendered, isNamespaced, {
      instance: settings.instance,
      defaultNamespace: settings.namespace,
      createNamespace: settings.createNamespace,
    }),
    settings.confinement,
  );
  // An object whose wave cannot be read is refused: neither applied nor ordered by guesswork.
  const waveless = new Set<DesiredObject>();
  for (const item of confined) {
    const wave = syncWaveOf(item.object);
    if ("error" in wave) {
      refused.push({ ref: item.ref, reason: wave.error });
      waveless.add(item);
    }
  }
  const confinedWaved = confined.filter((item) => !waveless.has(item));
  if (settings.createNamespace && !scopes.has("v1 Namespace")) scopes.set("v1 Namespace", false);

  const stored = await readInventory(cluster, settings.inventoryNamespace, settings.instance);
  if (memory) {
    const identity = serverIdentity(serverVersion, stored.uid);
    // Memory gathered on another server (or a copy of the inventory on another cluster) is never trusted.
    if (identity !== undefined && stored.record.server !== undefined && stored.record.server !== identity)
      memory.clear();
    else if (identity !== undefined && stored.record.server === identity && !settings.dryRun)
      memory.adopt(stored.record.inSync);
  }
  // A kind the RBAC refuses: its objects are refused, the other kinds still observed.
  const rbac = new RbacRefusals();
  let desired = confinedWaved;

  // One list per kind and namespace (label-selected) instead of one GET per object.
  const live = new Map<string, KubeObject>();
  const groups = new Map<string, { apiVersion: string; kind: string; namespace: string | undefined }>();
  for (const { ref, object } of desired) {
    if (scopes.get(`${object.apiVersion} ${object.kind}`) === undefined) continue; // kind not served yet (CRD created this cycle)
    groups.set(`${object.apiVersion} ${object.kind} ${ref.namespace}`, {
      apiVersion: object.apiVersion,
      kind: object.kind,
      namespace: ref.namespace || undefined,
    });
  }
  await forEachLimited([...groups.entries()], concurrency, async ([key, { apiVersion, kind, namespace }]) => {
    let objects: KubeObject[];
    try {
      objects = await cluster.list(apiVersion, kind, namespace, `${INSTANCE_LABEL}=${settings.instance}`);
    } catch (error) {
      if (!isForbidden(error)) throw error;
      for (const { ref, object } of desired)
        if (`${object.apiVersion} ${object.kind} ${ref.namespace}` === key) rbac.add(ref, error);
      return;
    }
    for (const object of objects) live.set(inventoryKey(refOf(object)), object);
  });
  // Desired objects not found under our label may exist unlabelled (adopt them: diff, not create)
  // or belong to another Ferry instance (refuse: two instances fighting over an object would undo
  // each other every cycle, which is what Argo CD's FailOnSharedResource prevents).
  const desiredKeys = new Set([...desired, ...waveless].map(({ ref }) => inventoryKey(ref)));
  const unseenGroups = new Map<string, { apiVersion: string; kind: string; namespace: string | undefined }>();
  for (const { ref, object } of desired) {
    const group = groups.get(`${object.apiVersion} ${object.kind} ${ref.namespace}`);
    if (group && !live.has(inventoryKey(ref)) && !rbac.has(ref))
      unseenGroups.set(`${object.apiVersion} ${object.kind} ${ref.namespace}`, group);
  }
  await forEachLimited([...unseenGroups.values()], concurrency, async ({ apiVersion, kind, namespace }) => {
    for (const object of await cluster.list(
      apiVersion,
      kind,
      namespace,
      `${INSTANCE_LABEL}!=${settings.instance}`,
    )) {
      const key = inventoryKey(refOf(object));
      if (!desiredKeys.has(key)) continue;
      const owner = object.metadata.labels?.[INSTANCE_LABEL];
      if (owner !== undefined && owner !== settings.instance) {
        throw new UserError(
          "shared-object",
          `${describeRef(refOf(object))} is managed by Ferry instance "${owner}"; remove it from one of the two configs`,
        );
      }
      live.set(key, object);
    }
  });

  const namespacesCreatedHere = new Set(
    desired
      .filter(
        ({ ref }) =>
          ref.group === "" && ref.kind === "Namespace" && !live.has(inventoryKey(ref)) && !rbac.has(ref),
      )
      .map(({ ref }) => ref.name),
  );
  const observed = new Map<string, ObservedObject>();
  await forEachLimited(desired, concurrency, async ({ ref, object }) => {
    const key = inventoryKey(ref);
    if (rbac.has(ref)) return;
    if (scopes.get(`${object.apiVersion} ${object.kind}`) === undefined) {
      observed.set(key, {});
      return;
    }
    const current = live.get(key);
    if (current && memory?.isKnownInSync(key, object, current)) {
      observed.set(key, { live: current, dryRun: current });
      return;
    }
    // A create needs no diff, but its dry-run still validates the object before anything is written.
    let dryRun: KubeObject;
    try {
      dryRun = await cluster.apply(object, { dryRun: true });
    } catch (error) {
      // The namespace is created by this very plan, so nothing in it can exist yet: a plain create.
      if (
        !current &&
        (error as { code?: string }).code === "kubernetes-not-found" &&
        namespacesCreatedHere.has(ref.namespace)
      ) {
        observed.set(key, {});
        return;
      }
      // Listing the kind is allowed, writing it is not.
      if (isForbidden(error)) {
        rbac.add(ref, error);
        return;
      }
      throw error;
    }
    observed.set(key, current ? { live: current, dryRun } : {});
  });

  const split = rbac.split(desired);
  desired = split.kept;
  refused.push(...split.refused);

  const outOfScope = new Map<string, string>();
  const orphans = stored.refs.filter((ref) => {
    // A refused desired object stays in the inventory, kept as one outside the confinement is.
    const forbidden = rbac.reasonFor(ref);
    if (forbidden) outOfScope.set(inventoryKey(ref), forbidden);
    if (desiredKeys.has(inventoryKey(ref))) return false;
    const reason = settings.confinement && refusalReason(ref, settings.confinement);
    if (reason) outOfScope.set(inventoryKey(ref), reason);
    return !reason;
  });
  const orphansLive = new Map<string, KubeObject | undefined>();
  await forEachLimited(orphans, concurrency, async (ref) => {
    try {
      orphansLive.set(inventoryKey(ref), await cluster.get(ref));
    } catch (error) {
      // An orphan of a kind the RBAC refuses: never pruned, kept in the inventory.
      if (!isForbidden(error)) throw error;
      outOfScope.set(inventoryKey(ref), forbiddenReason(error));
    }
  });
  return {
    desired,
    observed,
    inventory: stored.refs,
    stored,
    orphansLive,
    refused,
    outOfScope,
    hooks,
  };
}

/** `<version>/<inventory uid>`: undefined unless both are known. */
export function serverIdentity(
  version: string | undefined,
  inventoryUid: string | undefined,
): string | undefined {
  return version && inventoryUid ? `${version}/${inventoryUid}` : undefined;
}
