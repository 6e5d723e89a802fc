/**
 * One reconcile cycle: fetch → render → observe → plan → intent → apply → prune → health. Any
 * error before the plan is complete aborts the cycle with nothing written (docs/reliability.md, reconciler
 * rule 1: never prune on an error); an apply error stops the prune but records what was applied. New
 * members are recorded before they are applied, and a head that does not contain the applied
 * revision holds the prune for a grace period (`revision-guard.ts`).
 */
import { applyPlan } from "./apply.js";
import { describeRefusal } from "./confinement.js";
import { failure, statusKindsOf, summarize, type CyclePhase, type CycleResult } from "./cycle-result.js";
import type { CycleSettings } from "./cycle-settings.js";
import { rememberInSync, type DiffMemory } from "./diff-memory.js";
import { detectDrift } from "./drift.js";
import { dryRunSides } from "./dry-run-sides.js";
import { observe, type Observation } from "./observe.js";
import type { RenderedObject } from "./parse-manifests.js";
import { planSync, type SyncPlan } from "./plan.js";
import type { ClusterPort, ConfigSource } from "./ports.js";
import { pruneAndRecord } from "./prune.js";
import { lookUpOrphanContents } from "./prune-contents.js";
import type { OrphanContents } from "./prune-guard.js";
import { renderPathWithSources } from "./render-folder.js";
import type { ChartDependencyPin } from "./chart-dependencies.js";
import { closingRecord, recordIntent } from "./cycle-bookkeeping.js";
import { DiffMemory as CycleMemory } from "./diff-memory.js";
import { serverIdentity } from "./observe.js";
import { guardRevision, type RevisionGuardVerdict } from "./revision-guard.js";
import { isTransientError } from "../core/errors.js";
import { inventoryKey } from "./object-ref.js";
import { propagationPolicyOf } from "./sync-options.js";
import { waveGate } from "./sync-waves.js";

/** Default `--prune-grace-cycles`. */
export const DEFAULT_PRUNE_GRACE_CYCLES = 3;

export type { CyclePhase, CycleResult } from "./cycle-result.js";
export type { CycleSettings } from "./cycle-settings.js";
export { DiffMemory } from "./diff-memory.js";

export async function runCycle(
  cluster: ClusterPort,
  source: ConfigSource,
  settings: CycleSettings,
  memory?: DiffMemory,
): Promise<CycleResult> {
  // Without a process memory the cycle still gathers one, to store in the inventory.
  const cycleMemory = memory ?? new CycleMemory();
  let revision: string;
  let dir: string;
  /** Set while the source cannot be fetched and the cycle heals from the last good checkout. */
  let stale: string | undefined;
  try {
    ({ revision, dir } = await source.fetch());
  } catch (error) {
    const last = source.lastGood?.();
    if (!last) return failure("fetch", error);
    // The last good checkout is on disk: keep undoing drift from it (docs/reliability.md row 57).
    ({ revision, dir } = last);
    const since = source.unreachableSince?.();
    stale = `config repo unreachable${since ? ` since ${since.toISOString()}` : ""}: ${firstLine(error)}; healing from ${revision.slice(0, 7)}, the last good revision`;
  }

  let rendered: RenderedObject[];
  let charts: ChartDependencyPin[];
  try {
    ({ objects: rendered, charts } = await renderPathWithSources(dir, settings.path, settings.render));
  } catch (error) {
    return failure("render", error, { revision });
  }

  let observation: Observation;
  let orphanContents: OrphanContents;
  let serverVersion: string | undefined;
  try {
    serverVersion = settings.dryRun ? undefined : await cluster.serverVersion?.();
    observation = await observe(cluster, settings, rendered, cycleMemory, serverVersion);
    orphanContents = settings.prune.prune ? await lookUpOrphanContents(cluster, observation) : new Map();
  } catch (error) {
    return failure("observe", error, { revision });
  }
  const { stored } = observation;
  const notes: string[] = stale ? [stale] : [];
  if (observation.hooks.length > 0)
    notes.push(
      `not applied: hooks are not supported: ${observation.hooks.slice(0, 5).join(", ")}${observation.hooks.length > 5 ? ` and ${observation.hooks.length - 5} more` : ""}`,
    );
  if (stored.record.intent)
    notes.push(
      `the cycle applying ${stored.record.intent.revision.slice(0, 12)} did not finish; its ${stored.record.intent.planned.length} planned objects are in the inventory`,
    );

  let plan: SyncPlan;
  try {
    plan = planSync({ instance: settings.instance, ...observation, orphanContents, options: settings.prune });
  } catch (error) {
    return failure("plan", error, { revision });
  }
  let verdict: RevisionGuardVerdict;
  try {
    verdict = await guardPrune(source, settings, stored.record, revision);
  } catch (error) {
    return failure("plan", error, { revision });
  }
  if (verdict.holdPrune && settings.prune.prune) {
    notes.push(`prune held: ${verdict.reason ?? ""}`);
    plan = {
      ...plan,
      prune: [],
      keep: [...plan.keep, ...plan.prune.map((ref) => ({ ref, reason: "revision-grace" as const }))],
      nextInventory: [...plan.nextInventory, ...plan.prune],
    };
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
  if (settings.dryRun) {
    const result: CycleResult = {
      ...summarize({
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
      }),
      dryRunSides: dryRunSides(plan, observation),
    };
    if (charts.length > 0) result.charts = charts;
    return result;
  }

  // Intent before apply: a crash from here on leaves every object it creates in the inventory.
  let intent;
  try {
    intent = await recordIntent(cluster, settings, stored, observation.inventory, plan, revision);
  } catch (error) {
    const result = failure("apply", error, { revision });
    result.errors = [`inventory: ${(error as Error).message} (nothing else applied)`];
    result.transient = isTransientError(error);
    return result;
  }
  const { members, lastWritten, uid } = intent;

  const statusKinds = await statusKindsOf(cluster, observation.desired);
  const applied = await applyPlan(
    cluster,
    plan,
    settings.concurrency ?? 8,
    settings.crdServedTimeoutMs,
    waveGate(observation.desired, observation.observed, statusKinds, cluster.statusReporting?.bind(cluster)),
  );
  rememberInSync(cycleMemory, plan, observation, applied.liveAfter);
  // A wave left for a later cycle holds the prune, as an apply error does: the revision is not applied yet.
  const appliedAll = applied.errors.length === 0 && refusals.length === 0 && !applied.waiting;
  if (applied.waiting) notes.push(applied.waiting.reason);
  const fallbackPolicy = settings.prunePropagation ?? "Background";
  const pruned = await pruneAndRecord(cluster, {
    plan,
    inventory: members,
    stored: lastWritten,
    next: (entries) =>
      closingRecord({
        stored: stored.record,
        lastWritten,
        members: entries,
        appliedAll,
        verdict,
        server: serverIdentity(serverVersion, uid),
        memory: cycleMemory,
      }),
    inventoryNamespace: settings.inventoryNamespace,
    instance: settings.instance,
    applied: applied.applied,
    holdPrune: !appliedAll,
    propagation: (ref) => {
      const live = observation.orphansLive.get(inventoryKey(ref));
      return live ? propagationPolicyOf(live, fallbackPolicy) : fallbackPolicy;
    },
  });
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
    writes: intent.writes + applied.writes + pruned.writes,
    phase,
    dryRun: false,
    // Asked again after the apply: a CRD it created now answers for its kind.
    statusKinds: await statusKindsOf(cluster, observation.desired),
    ...(applied.waiting ? { waiting: applied.waiting } : {}),
  });
  result.transient = applied.transient || pruned.transient;
  if (notes.length > 0) result.notes = notes;
  if (charts.length > 0) result.charts = charts;
  if (drift.records.length > 0) {
    result.drift = driftReport;
    if (driftReport.left.length > 0) result.sync = "OutOfSync";
  }
  return result;
}

/** Asks the source whether the head contains the inventory's applied revision, and judges the prune. */
async function guardPrune(
  source: ConfigSource,
  settings: CycleSettings,
  record: { appliedRevision?: string; grace?: { head: string; cyclesLeft: number } },
  head: string,
): Promise<RevisionGuardVerdict> {
  const recorded = record.appliedRevision;
  const contained =
    recorded === undefined || recorded === head || !source.contains
      ? true
      : await source.contains(recorded, head);
  return guardRevision({
    recorded,
    head,
    contained,
    grace: record.grace,
    graceCycles: settings.pruneGraceCycles ?? DEFAULT_PRUNE_GRACE_CYCLES,
  });
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!.slice(0, 300);
}
