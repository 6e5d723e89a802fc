import { sameImage } from "../core/image-ref.js";
import { environmentOrder, type FerryConfig } from "../core/config/schema.js";
import type { PolicyNotice } from "../core/pr/dashboard.js";
import { isUserError } from "../core/errors.js";
import { formatBranchName } from "../core/pr/branch.js";
import { promotionUnits } from "../core/pr/promotion-unit.js";
import { gateOutcome } from "../core/policy/ci-gating.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { errorText } from "./error-text.js";
import { loadRepoConfig, type ConfigReading } from "./load-repo-config.js";
import { closeEmptyDefaultUnit, closeRemovedUnits } from "./obsolete-units.js";
import type { Promoting } from "./promote.js";
import type { GitHubChecks, PullRequestInfo } from "./github-port.js";
import type { ImageDescription } from "./ports.js";
import { repoFileSource } from "./repo-files.js";
import { soakPending } from "./soak.js";
import { notifyBlocked } from "./notifications.js";
import { writeDashboard } from "./dashboard-issue.js";
import { isHeld, loadState } from "./state-ref.js";
import { followPins, syncUnit, type UnitAction } from "./sync-unit.js";
import { publishWindowTransitions } from "./window-transitions.js";

export interface SyncTrigger {
  /** Why we look (log context): `registry`, `workflow_run`, `push`, `scan`… */
  reason: string;
  /** Only environments/images related to the trigger; all when absent. */
  repositories?: string[];
  /** Only images built from these source repos (`acme/shop`): a workflow_run or check_suite there. */
  sources?: string[];
  baseBranch?: string;
}

export interface SyncResult {
  skipped?: "no-config" | "invalid-config";
  /** `soaking`: the environment follows an upstream that has not been healthy for its `soak` yet. */
  /** `refused`: a repository ruleset refuses the environment's branch write (rule-refusals.ts). */
  environments: Record<string, UnitAction>;
  /**
   * Per unit's branch (docs/config.md "Grouping"): what happened to it. `environments` sums an
   * environment's units up: its one unit's answer, else the most telling one (an error first).
   */
  units?: Record<string, UnitAction>;
}

const TELLING: UnitAction[] = [
  "error",
  "refused",
  "held",
  "soaking",
  "opened",
  "updated",
  "closed",
  "unchanged",
];

function summary(actions: UnitAction[]): UnitAction {
  return TELLING.find((action) => actions.includes(action)) ?? "none";
}

/**
 * New image → PR per environment (docs/architecture.md "From an event to a PR"). A trigger is only a hint: the registry and the
 * repo are re-read, each `update: auto` environment is planned (policy, no downgrade, floors and
 * holds respected, CI gating), and its PR is upserted. Environments are serialized per key.
 */
export async function syncRepository(
  deps: AppDeps<ConfigReading & Promoting>,
  trigger: SyncTrigger,
): Promise<SyncResult> {
  const loaded = await loadRepoConfig(deps, trigger.baseBranch);
  if (!loaded.ok)
    return { skipped: loaded.reason === "missing" ? "no-config" : "invalid-config", environments: {} };
  const { config } = loaded;
  const images = imagesFor(config, trigger.repositories).filter(
    (name) =>
      !trigger.sources ||
      trigger.sources.some((source) => source.toLowerCase() === config.images[name]!.source?.toLowerCase()),
  );
  if (images.length === 0) return { environments: {} };
  const { state, dashboard } = await loadState(deps);
  const result: SyncResult = { environments: {} };
  // Open PRs this sync has just seen (by branch), so the dashboard does not look them up again.
  // A scan reads them all at once: its steady cost does not grow with the units (docs/capacity.md).
  const listing = trigger.reason === "scan" ? await listedPulls(deps, config) : { units: {}, others: [] };
  const pulls: Record<string, PullRequestInfo | undefined> = listing.units;
  // What the plans say a human should know (a running tag outside its policy), for the dashboard.
  const notices: PolicyNotice[] = [];
  // Bugs and transient failures of one unit, rethrown once every other unit had its turn.
  const failures: unknown[] = [];
  for (const environment of environmentOrder(config)) {
    const environmentConfig = config.environments[environment]!;
    if (environmentConfig.update !== "auto") continue;
    // Only the units holding a triggering image are looked at, each with all its images.
    const units = promotionUnits(config, environment).filter((unit) =>
      unit.images.some((image) => images.includes(image)),
    );
    const actions: UnitAction[] = [];
    const settle = (branch: string, action: UnitAction) => {
      (result.units ??= {})[branch] = action;
      actions.push(action);
    };
    if (isHeld(state, environment)) {
      for (const unit of units) settle(unit.branch, "held");
      result.environments[environment] = "held";
      continue;
    }
    try {
      if (environmentConfig.from !== undefined) {
        // The same gate as /promote: a later scan takes the upstream's versions once it has soaked.
        const pending = await soakPending(deps, loaded, environmentConfig.from, environmentConfig.soak);
        if (pending) {
          deps.log.info({ environment, reason: pending.reason }, "waiting for the upstream to soak");
          notifyBlocked(deps, config, {
            environment,
            reason: "soak",
            detail: `waits for ${environmentConfig.from}: ${pending.reason}`,
            occurrence: `sync:${loaded.base.sha}`,
          });
          // The dashboard says why the promotion waits (a soak never passes silently).
          for (const image of images)
            notices.push({
              environment,
              image,
              message: `waits for ${environmentConfig.from}: ${pending.reason}`,
            });
          for (const unit of units) settle(unit.branch, "soaking");
          result.environments[environment] = "soaking";
          continue;
        }
      }
      const files = repoFileSource(deps.github, loaded.base.treeSha);
      const follow =
        environmentConfig.from !== undefined
          ? await followPins(deps, loaded, environment, files, state.floors[environment] ?? {})
          : undefined;
      const context = {
        loaded,
        state,
        reason: trigger.reason,
        files,
        ...(follow ? { follow } : {}),
        eligible: ciGate(deps, config),
        notices,
        pulls,
      };
      // One unit's failure never stops the next (docs/config.md "Grouping").
      for (const unit of units) {
        const outcome = await syncUnit(deps, context, unit);
        if (outcome.failure !== undefined) failures.push(outcome.failure);
        settle(unit.branch, outcome.action);
      }
      await closeEmptyDefaultUnit(deps, loaded, environment, units, pulls, trigger.reason);
      for (const file of files.skipped?.() ?? [])
        deps.log.warn({ environment, file: file.path, reason: file.reason }, "file skipped");
    } catch (error) {
      if (!isUserError(error)) throw error;
      deps.log.warn({ environment, error: errorText(error, deps.secrets) }, "environment skipped");
      actions.push("error");
    }
    result.environments[environment] = summary(actions);
  }
  if (trigger.reason === "scan") {
    // PRs of units the config no longer has are closed (docs/config.md "Grouping").
    try {
      await closeRemovedUnits(deps, loaded, listing.others);
    } catch (error) {
      failures.push(error);
    }
    // The scan re-posts `ferry/window` where a change window opened or closed since it last did.
    await publishWindowTransitions(deps, loaded, state);
  }
  if (failures.length > 0) throw failures[0];
  // The periodic scan also keeps the pinned dashboard current (merges and commands refresh it too).
  if (trigger.reason === "scan") await writeDashboard(deps, loaded, state, { dashboard, pulls, notices });
  deps.log.info({ reason: trigger.reason, environments: result.environments }, "sync done");
  return result;
}

/** A scan lists at most this many open PRs (10 pages) before it looks up each unit's branch instead. */
export const MAX_LISTED_PULLS = 1000;

/**
 * Every unit's branch (and each environment's default one) → its open PR, from one listing of the
 * repository's open PRs; empty (each branch looked up on its own) when there are too many to list.
 * `others`: the listed PRs of this repository on any other branch (a unit the config no longer has).
 */
async function listedPulls(
  deps: AppDeps<Promoting>,
  config: FerryConfig,
): Promise<{ units: Record<string, PullRequestInfo | undefined>; others: PullRequestInfo[] }> {
  if (!deps.github.listOpenPulls) return { units: {}, others: [] };
  const listed = await deps.github.listOpenPulls(MAX_LISTED_PULLS + 1);
  if (listed.length > MAX_LISTED_PULLS) return { units: {}, others: [] };
  // Forks left out, as findOpenPull does: a fork's branch named like Ferry's is not Ferry's.
  const own = `${deps.github.owner}/${deps.github.repo}`.toLowerCase();
  const open = listed.filter((pull) => pull.headRepo?.toLowerCase() === own);
  const byBranch = new Map(open.map((pull) => [pull.headRef, pull]));
  const out: Record<string, PullRequestInfo | undefined> = {};
  for (const environment of Object.keys(config.environments)) {
    for (const branch of [
      formatBranchName(environment),
      ...promotionUnits(config, environment).map((unit) => unit.branch),
    ])
      out[branch] = byBranch.get(branch);
  }
  return { units: out, others: open.filter((pull) => !(pull.headRef in out)) };
}

function imagesFor(config: FerryConfig, repositories: string[] | undefined): string[] {
  const names = Object.keys(config.images);
  if (!repositories) return names;
  return names.filter((name) =>
    repositories.some((repository) => sameImage(config.images[name]!.repository, repository)),
  );
}

/**
 * CI gating (docs/config.md "Images"): when an image names a `source` repo, a tag is eligible only when the
 * commit it was built from (OCI revision label, else the source repo's git tag) passed CI.
 */
export function ciGate(
  deps: AppDeps<GitHubChecks>,
  config: FerryConfig,
): (image: string, tag: string, description: ImageDescription) => Promise<true | string> {
  return async (image, tag, description) => {
    const source = config.images[image]?.source;
    if (!source) return true;
    const [owner, repo] = source.split("/") as [string, string];
    const tagged =
      description.revision === undefined ? await deps.github.tagCommit?.({ owner, repo }, tag) : undefined;
    const revision =
      description.revision !== undefined
        ? { sha: description.revision, from: "label" as const }
        : tagged !== undefined
          ? { sha: tagged, from: "git-tag" as const }
          : undefined;
    const ci = revision ? await deps.github.checksState(revision.sha, undefined, { owner, repo }) : undefined;
    const outcome = gateOutcome({ tag, source, ...(revision ? { revision } : {}), ...(ci ? { ci } : {}) });
    return outcome.eligible ? true : outcome.why;
  };
}

export type { LoadedConfig };
