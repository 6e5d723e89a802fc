/**
 * One reconcile cycle: fetch → render → observe → plan → apply → prune → health. Any error before
 * the plan is complete aborts the cycle with nothing written (docs/reliability.md, reconciler rule 1: never
 * prune on an error); an apply error stops the prune but records what was applied.
 */
import { isTransientError, UserError } from "../core/errors.js";
import { aggregateHealth, assessHealth } from "./health.js";
import { inventoryEntries, inventoryObject, readInventory } from "./inventory.js";
import { applyRank, describeRef, inventoryKey, refOf } from "./object-ref.js";
import { INSTANCE_LABEL, prepareDesiredState, scopeResolver, type DesiredObject } from "./desired-state.js";
import { planSync, type ObservedObject, type PruneOptions, type SyncPlan } from "./plan.js";
import type { ClusterPort, ConfigSource } from "./ports.js";
import { renderPath, type RenderOptions } from "./render.js";
import type { HealthStatus, KubeObject, ObjectRef, ObjectStatus, SyncStatus } from "./types.js";

export interface CycleSettings {
  /** Names this reconciler's objects (label `ferry.dev/instance`) and its inventory. */
  instance: string;
  /** The folder inside the config repo to render. */
  path: string;
  /** The namespace for namespaced objects that name none. */
  namespace: string;
  /** Where the inventory ConfigMap lives (the reconciler's own namespace). */
  inventoryNamespace: string;
  createNamespace: boolean;
  /** Plan only: print what would change, write nothing. */
  dryRun: boolean;
  prune: PruneOptions;
  render?: RenderOptions;
  /** Parallel requests while observing and applying (same-rank objects only). */
  concurrency?: number;
  /** How long to wait for an applied CRD's kind to be served before applying its resources (default 30 s). */
  crdServedTimeoutMs?: number;
}

export type CyclePhase = "fetch" | "render" | "observe" | "plan" | "apply" | "prune" | "done";

export interface CycleResult {
  ok: boolean;
  /** Where the cycle stopped: "done" when it ran to the end. */
  phase: CyclePhase;
  /** The revision this cycle tried (undefined when the fetch failed). */
  revision?: string;
  /** Set when every object of `revision` was applied (or already in sync). */
  appliedRevision?: string;
  plan?: SyncPlan;
  applied: ObjectRef[];
  pruned: ObjectRef[];
  sync: SyncStatus;
  health: HealthStatus;
  objects: ObjectStatus[];
  errors: string[];
  /** True when the cycle failed in a way that may pass on retry (network, 5xx). */
  transient: boolean;
  /** Write requests made (applies, deletes, inventory). */
  writes: number;
}

function failure(phase: CyclePhase, error: unknown, extra: Partial<CycleResult> = {}): CycleResult {
  return {
    ok: false,
    phase,
    applied: [],
    pruned: [],
    sync: "Unknown",
    health: "Degraded",
    objects: [],
    errors: [`${phase}: ${(error as Error).message}`],
    transient: isTransientError(error),
    writes: 0,
    ...extra,
  };
}

/** Runs `work` over items with at most `limit` in flight; rejects with the first error after all settle. */
async function forEachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let firstError: unknown;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        firstError ??= error;
      }
    }
  });
  await Promise.all(runners);
  if (firstError !== undefined) throw firstError;
}

/**
 * Remembers, per object, the desired object last found in sync and the live resourceVersion it was
 * in sync at. Server-side apply is deterministic, so while neither changes a dry-run would only
 * repeat itself: a no-op cycle then costs a few LISTs instead of one dry-run per object. Any change
 * to the live object (a hand edit, a controller's status update) bumps its resourceVersion and
 * brings the dry-run back.
 */
export class DiffMemory {
  private readonly inSync = new Map<string, { fingerprint: string; resourceVersion: string }>();

  static fingerprint(object: KubeObject): string {
    return JSON.stringify(object);
  }

  isKnownInSync(key: string, desired: KubeObject, live: KubeObject): boolean {
    const entry = this.inSync.get(key);
    const version = live.metadata.resourceVersion;
    return (
      entry !== undefined &&
      typeof version === "string" &&
      entry.resourceVersion === version &&
      entry.fingerprint === DiffMemory.fingerprint(desired)
    );
  }

  remember(key: string, desired: KubeObject, live: KubeObject | undefined): void {
    const version = live?.metadata.resourceVersion;
    if (typeof version === "string")
      this.inSync.set(key, { fingerprint: DiffMemory.fingerprint(desired), resourceVersion: version });
    else this.inSync.delete(key);
  }

  forget(key: string): void {
    this.inSync.delete(key);
  }

  /** Drops entries for objects no longer desired, so memory stays bounded by the desired set. */
  retainOnly(keys: Set<string>): void {
    for (const key of this.inSync.keys()) if (!keys.has(key)) this.inSync.delete(key);
  }
}

interface Observation {
  desired: DesiredObject[];
  observed: Map<string, ObservedObject>;
  inventory: ObjectRef[];
  inventoryEntries: string[];
  orphansLive: Map<string, KubeObject | undefined>;
}

/** Reads everything the plan needs. Throws on any error: a partial picture must never drive a prune. */
async function observe(
  cluster: ClusterPort,
  settings: CycleSettings,
  rendered: Awaited<ReturnType<typeof renderPath>>,
  memory: DiffMemory | undefined,
): Promise<Observation> {
  const concurrency = settings.concurrency ?? 8;
  const scopes = new Map<string, boolean | undefined>();
  for (const { object } of rendered) {
    const key = `${object.apiVersion} ${object.kind}`;
    if (!scopes.has(key)) scopes.set(key, await cluster.isNamespaced(object.apiVersion, object.kind));
  }
  const isNamespaced = scopeResolver(
    rendered.map(({ object }) => object),
    (apiVersion, kind) => scopes.get(`${apiVersion} ${kind}`),
  );
  const desired = prepareDesiredState(rendered, isNamespaced, {
    instance: settings.instance,
    defaultNamespace: settings.namespace,
    createNamespace: settings.createNamespace,
  });
  if (settings.createNamespace && !scopes.has("v1 Namespace")) scopes.set("v1 Namespace", false);

  const stored = await readInventory(cluster, settings.inventoryNamespace, settings.instance);

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
  await forEachLimited([...groups.values()], concurrency, async ({ apiVersion, kind, namespace }) => {
    for (const object of await cluster.list(
      apiVersion,
      kind,
      namespace,
      `${INSTANCE_LABEL}=${settings.instance}`,
    )) {
      live.set(inventoryKey(refOf(object)), object);
    }
  });
  // Desired objects not found under our label may exist unlabelled (adopt them: diff, not create)
  // or belong to another Ferry instance (refuse: two instances fighting over an object would undo
  // each other every cycle, which is what Argo CD's FailOnSharedResource prevents).
  const desiredKeys = new Set(desired.map(({ ref }) => inventoryKey(ref)));
  const unseenGroups = new Map<string, { apiVersion: string; kind: string; namespace: string | undefined }>();
  for (const { ref, object } of desired) {
    const group = groups.get(`${object.apiVersion} ${object.kind} ${ref.namespace}`);
    if (group && !live.has(inventoryKey(ref)))
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
      .filter(({ ref }) => ref.group === "" && ref.kind === "Namespace" && !live.has(inventoryKey(ref)))
      .map(({ ref }) => ref.name),
  );
  const observed = new Map<string, ObservedObject>();
  await forEachLimited(desired, concurrency, async ({ ref, object }) => {
    const key = inventoryKey(ref);
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
      throw error;
    }
    observed.set(key, current ? { live: current, dryRun } : {});
  });

  const orphans = stored.refs.filter((ref) => !desiredKeys.has(inventoryKey(ref)));
  const orphansLive = new Map<string, KubeObject | undefined>();
  await forEachLimited(orphans, concurrency, async (ref) => {
    orphansLive.set(inventoryKey(ref), await cluster.get(ref));
  });
  return { desired, observed, inventory: stored.refs, inventoryEntries: stored.entries, orphansLive };
}

/** Resolves once every served version of the CRD's kind is in discovery; throws after `timeoutMs`. */
async function waitUntilServed(cluster: ClusterPort, crd: KubeObject, timeoutMs: number): Promise<void> {
  const spec = (crd.spec ?? {}) as {
    group?: string;
    names?: { kind?: string };
    versions?: { name?: string; served?: boolean }[];
  };
  const kind = spec.names?.kind;
  const versions = (spec.versions ?? []).filter((version) => version.served !== false && version.name);
  if (!spec.group || !kind) return;
  const deadline = Date.now() + timeoutMs;
  for (const { name } of versions) {
    while ((await cluster.isNamespaced(`${spec.group}/${name}`, kind)) === undefined) {
      if (Date.now() > deadline) {
        throw new UserError(
          "crd-not-served",
          `CustomResourceDefinition ${crd.metadata.name} is applied but ${kind} ${spec.group}/${name} is not served after ${Math.round(timeoutMs / 1000)} s`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

export async function runCycle(
  cluster: ClusterPort,
  source: ConfigSource,
  settings: CycleSettings,
  memory?: DiffMemory,
): Promise<CycleResult> {
  let revision: string;
  let dir: string;
  try {
    ({ revision, dir } = await source.fetch());
  } catch (error) {
    return failure("fetch", error);
  }

  let rendered: Awaited<ReturnType<typeof renderPath>>;
  try {
    rendered = await renderPath(dir, settings.path, settings.render);
  } catch (error) {
    return failure("render", error, { revision });
  }

  let observation: Observation;
  try {
    observation = await observe(cluster, settings, rendered, memory);
  } catch (error) {
    return failure("observe", error, { revision });
  }

  let plan: SyncPlan;
  try {
    plan = planSync({ instance: settings.instance, ...observation, options: settings.prune });
  } catch (error) {
    return failure("plan", error, { revision });
  }

  if (settings.dryRun)
    return summarize({
      revision,
      plan,
      observation,
      settings,
      liveAfter: new Map(),
      applied: [],
      pruned: [],
      errors: [],
      writes: 0,
      phase: "done",
      dryRun: true,
    });

  const errors: string[] = [];
  const applied: ObjectRef[] = [];
  const liveAfter = new Map<string, KubeObject>();
  let writes = 0;
  let transient = false;
  // Apply rank by rank (Namespaces, CRDs, cluster-scoped, the rest), in parallel within a rank.
  const ranks = [...new Set(plan.apply.map((item) => applyRank(item.ref)))];
  for (const rank of ranks) {
    const batch = plan.apply.filter((item) => applyRank(item.ref) === rank);
    await forEachLimited(batch, settings.concurrency ?? 8, async (item) => {
      writes++;
      try {
        liveAfter.set(inventoryKey(item.ref), await cluster.apply(item.object, { dryRun: false }));
        applied.push(item.ref);
      } catch (error) {
        transient ||= isTransientError(error);
        errors.push(`apply: ${(error as Error).message}`);
      }
    });
    // A CRD's kind is served a moment after the CRD is created: until then kube-apiserver answers
    // its custom resources with 404 (kubectl waits for condition=established; Flux's
    // ssa.ResourceManager.ApplyAllStaged waits for CRDs before applying the rest).
    const crds = batch.filter(
      (item) => item.ref.group === "apiextensions.k8s.io" && item.ref.kind === "CustomResourceDefinition",
    );
    for (const item of crds) {
      if (!applied.some((ref) => inventoryKey(ref) === inventoryKey(item.ref))) continue;
      try {
        await waitUntilServed(cluster, item.object, settings.crdServedTimeoutMs ?? 30_000);
      } catch (error) {
        transient ||= isTransientError(error);
        errors.push(`apply: ${(error as Error).message}`);
      }
    }
  }

  const pruned: ObjectRef[] = [];
  let inventory = plan.nextInventory;
  if (errors.length > 0) {
    // Record what now exists in the cluster, drop nothing: a later cycle can still prune it.
    const known = new Map(observation.inventory.map((ref) => [inventoryKey(ref), ref]));
    for (const ref of applied) known.set(inventoryKey(ref), ref);
    inventory = [...known.values()];
  } else {
    for (const ref of plan.prune) {
      writes++;
      try {
        await cluster.delete(ref);
        pruned.push(ref);
      } catch (error) {
        transient ||= isTransientError(error);
        errors.push(`prune: ${(error as Error).message}`);
      }
    }
    const prunedKeys = new Set(pruned.map(inventoryKey));
    // Objects whose delete failed stay in the inventory, to be pruned on a later cycle.
    inventory = [...plan.nextInventory, ...plan.prune.filter((ref) => !prunedKeys.has(inventoryKey(ref)))];
  }
  if (inventoryEntries(inventory).join("\n") !== observation.inventoryEntries.join("\n")) {
    writes++;
    try {
      await cluster.apply(inventoryObject(settings.inventoryNamespace, settings.instance, inventory), {
        dryRun: false,
      });
    } catch (error) {
      transient ||= isTransientError(error);
      errors.push(`inventory: ${(error as Error).message}`);
    }
  }
  if (memory) rememberInSync(memory, plan, observation, liveAfter);
  const phase: CyclePhase = errors.some((error) => error.startsWith("apply:"))
    ? "apply"
    : errors.length > 0
      ? "prune"
      : "done";
  const result = summarize({
    revision,
    plan,
    observation,
    settings,
    liveAfter,
    applied,
    pruned,
    errors,
    writes,
    phase,
    dryRun: false,
  });
  result.transient = transient;
  return result;
}

function rememberInSync(
  memory: DiffMemory,
  plan: SyncPlan,
  observation: Observation,
  liveAfter: Map<string, KubeObject>,
): void {
  const unchanged = new Set(plan.unchanged.map(inventoryKey));
  for (const { ref, object } of observation.desired) {
    const key = inventoryKey(ref);
    const applied = liveAfter.get(key);
    if (applied) memory.remember(key, object, applied);
    else if (unchanged.has(key)) memory.remember(key, object, observation.observed.get(key)?.live);
    else memory.forget(key);
  }
  memory.retainOnly(new Set(observation.desired.map(({ ref }) => inventoryKey(ref))));
}

function summarize(input: {
  revision: string;
  plan: SyncPlan;
  observation: Observation;
  settings: CycleSettings;
  liveAfter: Map<string, KubeObject>;
  applied: ObjectRef[];
  pruned: ObjectRef[];
  errors: string[];
  writes: number;
  phase: CyclePhase;
  dryRun: boolean;
}): CycleResult {
  const { revision, plan, observation, liveAfter, applied, pruned, errors, writes, phase, dryRun } = input;
  const appliedKeys = new Set(applied.map(inventoryKey));
  const pendingKeys = new Set(plan.apply.map((item) => inventoryKey(item.ref)));
  const objects: ObjectStatus[] = observation.desired.map(({ ref }) => {
    const key = inventoryKey(ref);
    const synced = !pendingKeys.has(key) || appliedKeys.has(key);
    const live = liveAfter.get(key) ?? observation.observed.get(key)?.live;
    const health = assessHealth(live);
    return { ref, sync: synced ? "Synced" : "OutOfSync", health: health.status, message: health.message };
  });
  for (const { ref, reason } of plan.keep) {
    if (reason === "prune-off" || reason === "circuit-breaker") {
      objects.push({ ref, sync: "OutOfSync", health: "Healthy", message: `requires pruning (${reason})` });
    }
  }
  const allErrors = [...errors];
  if (plan.pruneBlocked) allErrors.push(`prune: ${plan.pruneBlocked}`);
  const sync: SyncStatus =
    objects.every((object) => object.sync === "Synced") && allErrors.length === 0 ? "Synced" : "OutOfSync";
  const applyFailed = errors.some((error) => error.startsWith("apply:"));
  return {
    ok: allErrors.length === 0 && (dryRun || sync === "Synced"),
    phase,
    revision,
    ...(!dryRun && !applyFailed ? { appliedRevision: revision } : {}),
    plan,
    applied,
    pruned,
    sync,
    health: applyFailed ? "Degraded" : aggregateHealth(objects.map((object) => object.health)),
    objects,
    errors: allErrors,
    transient: false,
    writes,
  };
}
