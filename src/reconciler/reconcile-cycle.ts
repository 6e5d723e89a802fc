/**
 * One reconcile cycle: fetch → render → observe → plan → apply → prune → health. Any error before
 * the plan is complete aborts the cycle with nothing written (docs/reliability.md, reconciler rule 1: never
 * prune on an error); an apply error stops the prune but records what was applied.
 */
import { applyPlan } from "./apply.js";
import { describeRefusal } from "./confinement.js";
import { failure, statusKindsOf, summarize, type CyclePhase, type CycleResult } from "./cycle-result.js";
import type { CycleSettings } from "./cycle-settings.js";
import { rememberInSync, type DiffMemory } from "./diff-memory.js";
import { detectDrift } from "./drift.js";
import { observe, type Observation } from "./observe.js";
import type { RenderedObject } from "./parse-manifests.js";
import { planSync, type SyncPlan } from "./plan.js";
import type { ClusterPort, ConfigSource } from "./ports.js";
import { pruneAndRecord } from "./prune.js";
import { lookUpOrphanContents } from "./prune-contents.js";
import type { OrphanContents } from "./prune-guard.js";
import { renderPath } from "./render.js";

export type { CyclePhase, CycleResult } from "./cycle-result.js";
export type { CycleSettings } from "./cycle-settings.js";
export { DiffMemory } from "./diff-memory.js";

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

  let rendered: RenderedObject[];
  try {
    rendered = await renderPath(dir, settings.path, settings.render);
  } catch (error) {
    return failure("render", error, { revision });
  }

  let observation: Observation;
  let orphanContents: OrphanContents;
  try {
    observation = await observe(cluster, settings, rendered, memory);
    orphanContents = settings.prune.prune ? await lookUpOrphanContents(cluster, observation) : new Map();
  } catch (error) {
    return failure("observe", error, { revision });
  }

  let plan: SyncPlan;
  try {
    plan = planSync({ instance: settings.instance, ...observation, orphanContents, options: settings.prune });
  } catch (error) {
    return failure("plan", error, { revision });
  }
  // What someone changed in the cluster while Git did not: undone and recorded, or only reported.
  const drift = memory ? detectDrift(plan, observation, memory, new Date()) : { drifted: [], records: [] };
  const selfHeal = settings.selfHeal !== false;
  if (!selfHeal && drift.drifted.length > 0) {
    const left = new Set(drift.drifted);
    plan = { ...plan, apply: plan.apply.filter((planned) => !left.has(planned)) };
  }
  const driftReport = { undone: selfHeal ? drift.records : [], left: selfHeal ? [] : drift.records };

  // A refused object is a config error: reported per object, and like an apply error it holds the prune.
  const refusals = plan.refused.map(describeRefusal);
  if (settings.dryRun)
    return summarize({
      revision,
      plan,
      observation,
      settings,
      liveAfter: new Map(),
      applied: [],
      pruned: [],
      errors: refusals,
      writes: 0,
      phase: "done",
      dryRun: true,
      statusKinds: await statusKindsOf(cluster, observation.desired),
    });

  const applied = await applyPlan(cluster, plan, settings.concurrency ?? 8, settings.crdServedTimeoutMs);
  const pruned = await pruneAndRecord(cluster, {
    plan,
    inventory: observation.inventory,
    inventoryEntries: observation.inventoryEntries,
    inventoryNamespace: settings.inventoryNamespace,
    instance: settings.instance,
    applied: applied.applied,
    holdPrune: applied.errors.length > 0 || refusals.length > 0,
  });
  if (memory) rememberInSync(memory, plan, observation, applied.liveAfter);
  const errors = [...refusals, ...applied.errors, ...pruned.errors];
  const phase: CyclePhase =
    applied.errors.length > 0 || refusals.length > 0 ? "apply" : errors.length > 0 ? "prune" : "done";
  const result = summarize({
    revision,
    plan,
    observation,
    settings,
    liveAfter: applied.liveAfter,
    applied: applied.applied,
    pruned: pruned.pruned,
    errors,
    writes: applied.writes + pruned.writes,
    phase,
    dryRun: false,
    statusKinds: await statusKindsOf(cluster, observation.desired),
  });
  result.transient = applied.transient || pruned.transient;
  if (drift.records.length > 0) {
    result.drift = driftReport;
    if (driftReport.left.length > 0) result.sync = "OutOfSync";
  }
  return result;
}
