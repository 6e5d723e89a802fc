import { notifyBlocked } from "./notifications.js";
import { environmentPolicy } from "../core/policy/layered-policy.js";
import type { PolicyNotice } from "../core/pr/dashboard.js";
import { isUserError } from "../core/errors.js";
import { describeUnit } from "../core/pr/branch.js";
import { changesThatFit } from "../core/pr/plan-block.js";
import type { UnitImages } from "../core/pr/promotion-unit.js";
import { RuleViolationError } from "../core/rule-violation.js";
import { isNewer } from "../core/policy/select-tag.js";
import { unitHold, type FerryState } from "../core/state/ferry-state.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { errorText } from "./error-text.js";
import { unitLock } from "./keyed-mutex.js";
import type { ConfigReading } from "./load-repo-config.js";
import type { Promoting } from "./promote.js";
import { planEnvironment, currentImages } from "./plan-environment.js";
import { bodyRows } from "./pr-body-rows.js";
import type { PullRequestInfo } from "./github-port.js";
import type { ImageDescription } from "./ports.js";
import { repoFileSource } from "./repo-files.js";
import { retryStuckMerge } from "./retry-stuck-merge.js";
import { recordRefusal, standingRefusal } from "./rule-refusals.js";
import { upsertPromotionPr, type UpsertResult } from "./upsert-promotion-pr.js";
import { upstreamPins, type Pins } from "./upstream-pins.js";

/**
 * One promotion unit of an automatic environment in a sync (docs/config.md "Grouping"): its
 * images planned and its PR upserted on its own branch, under its own lock. Whatever goes wrong
 * in one unit (an edit or a registry read that fails, a ruleset refusing its branch, a GitHub
 * error) ends that unit only: the caller goes on with the others.
 */
export type UnitAction = UpsertResult["action"] | "held" | "soaking" | "refused" | "error";

export interface UnitSyncContext {
  loaded: LoadedConfig;
  state: FerryState;
  reason: string;
  files: ReturnType<typeof repoFileSource>;
  /** With `from`: the upstream's exact versions this environment follows (all its units). */
  follow?: Pins;
  eligible: (image: string, tag: string, description: ImageDescription) => Promise<true | string>;
  notices: PolicyNotice[];
  pulls: Record<string, PullRequestInfo | undefined>;
}

/**
 * Plans and upserts one unit. A failure is the unit's answer (`error`, `refused`), never thrown,
 * except a bug or a transient failure, which is returned in `failure` so that the caller can
 * rethrow it after the other units had their turn (a retry then covers this one).
 */
export async function syncUnit(
  deps: AppDeps<ConfigReading & Promoting>,
  context: UnitSyncContext,
  unit: UnitImages,
): Promise<{ action: UnitAction; failure?: unknown }> {
  const { loaded, state, notices, pulls } = context;
  const { config } = loaded;
  const { environment, branch } = unit;
  if (unitHold(state, environment, unit.group)) return { action: "held" };
  try {
    const action = await deps.locks.run(unitLock(deps, branch), async (): Promise<UnitAction> => {
      // Said once on the dashboard; not written again until the rules or the config change.
      const refused = await standingRefusal(deps, config, branch, branch);
      if (refused) {
        notices.push({ environment, message: refused });
        return "refused";
      }
      const follow = context.follow;
      const images = follow ? unit.images.filter((image) => image in follow) : unit.images;
      const planOf = (names: string[]) =>
        planEnvironment(
          {
            registry: deps.registryFor(config),
            files: context.files,
            now: deps.now(),
            secrets: deps.secrets,
          },
          config,
          environment,
          // Every image of the unit is planned, not only the triggering one: the PR carries the whole unit.
          // With `from`, the environment follows exactly what its upstream runs (same digest), never backwards.
          follow
            ? { pins: follow, images: names }
            : { images: names, floor: state.floors[environment] ?? {}, eligible: context.eligible },
        );
      let plan = await planOf(images);
      // A unit with more changes than a PR body holds is proposed in parts: the first ones now,
      // the rest once this PR merged (docs/config.md "Grouping").
      const fit = changesThatFit({ version: 1, environment, kind: "bump", changes: plan.changes });
      if (fit < plan.changes.length) {
        deps.log.info({ branch, changes: plan.changes.length, proposed: fit }, "unit proposed in parts");
        plan = await planOf(plan.changes.slice(0, fit).map((change) => change.image));
      }
      for (const { heldBack, ...notice } of plan.notices) {
        notices.push({ environment, ...notice });
        // Once per held tag: the same block seen by every later scan and replica is one event.
        if (heldBack)
          notifyBlocked(deps, config, {
            environment,
            reason: heldBack.reason,
            detail: `${notice.image}: ${notice.message}`,
            occurrence: `${notice.image}@${heldBack.tag}`,
          });
      }
      const upsert = await upsertPromotionPr(deps, {
        loaded,
        plan,
        ...(unit.group ? { group: unit.group } : {}),
        kind: "bump",
        rows: await bodyRows(deps, config, environment, plan),
        ...(branch in pulls ? { listed: { pull: pulls[branch] } } : {}),
      });
      // Only answers that leave the PR as it was read: a PR just opened may already be merged.
      if (upsert.action === "unchanged" || upsert.action === "none") {
        pulls[branch] = upsert.pull;
        // The scan also retries a PR left mergeable but unmerged (no event will come for it).
        if (context.reason === "scan" && upsert.pull)
          if ((await retryStuckMerge(deps, loaded, upsert.pull)) === "merged") pulls[branch] = undefined;
      }
      if (upsert.action === "closed") pulls[branch] = undefined;
      // Opened or updated: the dashboard reads it afresh, not what the scan's listing showed.
      if (upsert.action === "opened" || upsert.action === "updated") delete pulls[branch];
      return upsert.action;
    });
    return { action };
  } catch (error) {
    if (error instanceof RuleViolationError) {
      await recordRefusal(deps, config, branch, error).catch(() => undefined);
      notices.push({ environment, message: error.message });
      deps.log.warn({ branch, error: error.message }, "ruleset refused the branch write");
      return { action: "refused" };
    }
    const text = errorText(error, deps.secrets);
    if (!isUserError(error)) {
      // A bug's own words stay in the log; the scan rethrows it once the other units are done.
      deps.log.warn({ branch, error: text }, "unit failed");
      return { action: "error", failure: error };
    }
    deps.log.warn({ branch, error: text }, "unit skipped");
    if (unit.group) notices.push({ environment, message: `${describeUnit(unit)}: ${text}` });
    return { action: "error" };
  }
}

/**
 * `update: auto` with `from`: the upstream's exact versions, for images where the upstream runs a
 * newer tag than this environment and than its floor (no downgrade, human reverts respected).
 */
export async function followPins(
  deps: Pick<AppDeps, "registryFor">,
  loaded: LoadedConfig,
  environment: string,
  files: ReturnType<typeof repoFileSource>,
  floors: Record<string, string>,
): Promise<Pins> {
  const { config } = loaded;
  const upstream = config.environments[environment]!.from!;
  const ours = await currentImages(files, config, environment);
  const { pins } = await upstreamPins(deps.registryFor(config), files, config, upstream, {
    include: (name, running) => {
      const current = ours[name];
      if (!current || running.tag === undefined) return false;
      const policy = environmentPolicy(config, environment, name);
      if (current.tag !== undefined && isNewer(running.tag, current.tag, policy) !== true) return false;
      const floor = floors[name];
      return floor === undefined || isNewer(running.tag, floor, policy) === true;
    },
  });
  return pins;
}
