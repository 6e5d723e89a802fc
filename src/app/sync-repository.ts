import { sameImage } from "../core/image-ref.js";
import { environmentOrder, environmentPolicy, type FerryConfig } from "../core/config/schema.js";
import type { PolicyNotice } from "../core/pr/dashboard.js";
import { isUserError } from "../core/errors.js";
import { formatBranchName } from "../core/pr/branch.js";
import { RuleViolationError } from "../core/rule-violation.js";
import { isNewer } from "../core/policy/select-tag.js";
import { gateOutcome } from "../core/policy/ci-gating.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { errorText } from "./error-text.js";
import { loadRepoConfig, type ConfigReading } from "./load-repo-config.js";
import type { Promoting } from "./promote.js";
import { planEnvironment, currentImages } from "./plan-environment.js";
import { bodyRows } from "./pr-body-rows.js";
import type { GitHubChecks, PullRequestInfo } from "./github-port.js";
import type { ImageDescription } from "./ports.js";
import { repoFileSource } from "./repo-files.js";
import { retryStuckMerge } from "./retry-stuck-merge.js";
import { recordRefusal, standingRefusal } from "./rule-refusals.js";
import { soakPending } from "./soak.js";
import { notifyBlocked } from "./notifications.js";
import { isHeld, loadState, writeDashboard } from "./state.js";
import { upsertPromotionPr, type UpsertResult } from "./upsert-promotion-pr.js";
import { upstreamPins, type Pins } from "./upstream-pins.js";

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
  environments: Record<string, UpsertResult["action"] | "held" | "soaking" | "refused" | "error">;
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
  // Open PRs this sync has just seen, so the dashboard does not look them up again.
  const pulls: Record<string, PullRequestInfo | undefined> = {};
  // What the plans say a human should know (a running tag outside its policy), for the dashboard.
  const notices: PolicyNotice[] = [];
  for (const environment of environmentOrder(config)) {
    const environmentConfig = config.environments[environment]!;
    if (environmentConfig.update !== "auto") continue;
    if (isHeld(state, environment)) {
      result.environments[environment] = "held";
      continue;
    }
    try {
      result.environments[environment] = await deps.locks.run(
        `${deps.github.owner}/${deps.github.repo}#${environment}`,
        async () => {
          // Said once on the dashboard; not written again until the rules or the config change.
          const refused = await standingRefusal(deps, config, environment, formatBranchName(environment));
          if (refused) {
            notices.push({ environment, message: refused });
            return "refused";
          }
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
              return "soaking";
            }
          }
          const files = repoFileSource(deps.github, loaded.base.treeSha);
          const follow =
            environmentConfig.from !== undefined
              ? await followPins(deps, loaded, environment, files, state.floors[environment] ?? {})
              : undefined;
          const plan = await planEnvironment(
            { registry: deps.registryFor(config), files, now: deps.now(), secrets: deps.secrets },
            config,
            environment,
            // Every image is planned, not only the triggering one: the PR carries the whole environment.
            // With `from`, the environment follows exactly what its upstream runs (same digest), never backwards.
            follow
              ? { pins: follow, images: Object.keys(follow) }
              : { floor: state.floors[environment] ?? {}, eligible: ciGate(deps, config) },
          );
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
          for (const file of files.skipped?.() ?? [])
            deps.log.warn({ environment, file: file.path, reason: file.reason }, "file skipped");
          const upsert = await upsertPromotionPr(deps, {
            loaded,
            plan,
            kind: "bump",
            rows: await bodyRows(deps, config, environment, plan),
          });
          // Only answers that leave the PR as it was read: a PR just opened may already be merged.
          if (upsert.action === "unchanged" || upsert.action === "none") {
            pulls[environment] = upsert.pull;
            // The scan also retries a PR left mergeable but unmerged (no event will come for it).
            if (trigger.reason === "scan" && upsert.pull)
              if ((await retryStuckMerge(deps, loaded, upsert.pull)) === "merged")
                pulls[environment] = undefined;
          }
          if (upsert.action === "closed") pulls[environment] = undefined;
          return upsert.action;
        },
      );
    } catch (error) {
      if (error instanceof RuleViolationError) {
        await recordRefusal(deps, config, environment, error);
        notices.push({ environment, message: error.message });
        deps.log.warn({ environment, error: error.message }, "ruleset refused the branch write");
        result.environments[environment] = "refused";
        continue;
      }
      if (!isUserError(error)) throw error;
      deps.log.warn({ environment, error: errorText(error, deps.secrets) }, "environment skipped");
      result.environments[environment] = "error";
    }
  }
  // The periodic scan also keeps the pinned dashboard current (merges and commands refresh it too).
  if (trigger.reason === "scan") await writeDashboard(deps, loaded, state, { dashboard, pulls, notices });
  deps.log.info({ reason: trigger.reason, environments: result.environments }, "sync done");
  return result;
}

/**
 * `update: auto` with `from`: the upstream's exact versions, for images where the upstream runs a
 * newer tag than this environment and than its floor (no downgrade, human reverts respected).
 */
async function followPins(
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
