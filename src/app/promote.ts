import { environmentPolicy } from "../core/policy/layered-policy.js";
import { UserError } from "../core/errors.js";
import { shortDigest } from "../core/image-ref.js";
import { versionBefore, type FerryState } from "../core/state/ferry-state.js";
import { isNewer } from "../core/policy/select-tag.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { unitLock } from "./keyed-mutex.js";
import { planEnvironment, currentImages, type EnvironmentPlan } from "./plan-environment.js";
import type { GitHubDeployments } from "./github-port.js";
import type { PullWork } from "./merge-when-ready.js";
import { repoFileSource } from "./repo-files.js";
import { soakPending } from "./soak.js";
import { notifyBlocked } from "./notifications.js";
import type { StateWork } from "./dashboard-issue.js";
import { loadState } from "./state-ref.js";
import { updateState } from "./update-state.js";
import { bodyRows } from "./pr-body-rows.js";
import { upsertPromotionPr, type UpsertResult } from "./upsert-promotion-pr.js";
import { upstreamPins, type Pins } from "./upstream-pins.js";
import type { SoakConfig } from "../core/config/health-schema.js";
import { describeUnit } from "../core/pr/branch.js";
import { promotionUnits, type UnitImages } from "../core/pr/promotion-unit.js";
import { setUnitHold } from "../core/state/ferry-state.js";
import type { GitHubStatuses } from "./github-port.js";
import { withWindowOverride } from "./window-gate.js";

export interface PromoteInput {
  environment: string;
  /**
   * The unit the command was given on (its PR; docs/config.md "Grouping"): only its images, on its
   * branch. Absent: every unit of the environment (or the named image's), each on its own PR.
   */
  unit?: UnitImages;
  image?: { name: string; tag: string };
  by: string;
  /** Where the command was given; the PR links back to it. */
  issueNumber?: number;
  /** A change-window override the command passed (window-gate.ts), recorded for the PR's head. */
  override?: { reason: string; closed: string };
  /** Refuses (throws) when the requester may not change these images (docs/config.md "Who may promote what"). */
  allow?: (images: string[]) => Promise<void>;
}

/** The GitHub roles `/promote` and `/rollback` call: the state, the soak gate and the PR. */
export type Promoting = StateWork & PullWork & GitHubDeployments & GitHubStatuses;

/**
 * `/promote <env> [image@tag]` (docs/config.md "Commands"): with `from`, the environment gets exactly what its
 * upstream runs (same digest), once the upstream has soaked when it reports health; without
 * `from`, the named tag (or what the policy chooses). Returns the reply.
 */
export async function promote(
  deps: AppDeps<Promoting>,
  loaded: LoadedConfig,
  input: PromoteInput,
): Promise<string> {
  const { config } = loaded;
  const environmentConfig = config.environments[input.environment]!;
  const files = repoFileSource(deps.github, loaded.base.treeSha);
  let pins: Pins | undefined;
  let note: string;
  if (environmentConfig.from !== undefined) {
    const upstream = environmentConfig.from;
    await requireSoaked(deps, loaded, upstream, environmentConfig.soak, input.environment, input.by);
    ({ pins } = await upstreamPins(deps.registryFor(config), files, config, upstream, {
      include: (name, current) => {
        if (input.image && input.image.name !== name) return false;
        if (input.image && current.tag !== input.image.tag) {
          throw new UserError(
            "not-upstream",
            `${upstream} runs ${name} ${current.tag ?? current.digest ?? "nothing"}, not ${input.image.tag}; promote what ${upstream} runs`,
          );
        }
        return true;
      },
    }));
    if (input.image && !(input.image.name in pins))
      throw new UserError("unknown-image", `${upstream} does not run ${input.image.name}`);
    note = `Requested by @${input.by} with /promote: the exact digests ${upstream} runs.`;
  } else if (input.image) {
    pins = { [input.image.name]: await resolvePin(deps, loaded, input.image) };
    note = `Requested by @${input.by} with /promote.`;
  } else {
    note = `Requested by @${input.by} with /promote: the newest version the policy admits.`;
  }
  const replies: UnitReply[] = [];
  // Every unit is planned before any is written, so that the image rights (docs/config.md "Who may
  // promote what") see all the command would change and a refusal writes nothing.
  const planned = [];
  for (const unit of unitsOf(loaded, input, input.image ? [input.image.name] : undefined))
    planned.push({
      unit,
      plan: await planEnvironment(
        { registry: deps.registryFor(config), files, now: deps.now(), secrets: deps.secrets },
        config,
        input.environment,
        { ...(pins ? { pins } : {}), images: unit.images },
      ),
    });
  await input.allow?.(planned.flatMap(({ plan }) => plan.changes.map((change) => change.image)));
  for (const { unit, plan } of planned) {
    replies.push(
      await upsertUnit(deps, loaded, input, "promote", unit, plan, {
        policy: environmentConfig.from ? `promoted from ${environmentConfig.from}` : undefined,
        note,
      }),
    );
  }
  return joinReplies(replies, describeUnit(input.unit ?? { environment: input.environment }));
}

/**
 * `/rollback <env> [image@tag]` (docs/config.md "Commands"): a PR restoring the version before the current one in
 * the environment's history of promotions (versions already rolled back are no longer in it) or
 * the named one, and a hold on the environment so automatic updates do not undo it; the version
 * rolled back from becomes the floor for after `/unhold` (a floor is never lowered here).
 */
export async function rollback(
  deps: AppDeps<Promoting>,
  loaded: LoadedConfig,
  input: PromoteInput,
): Promise<string> {
  const { config } = loaded;
  const files = repoFileSource(deps.github, loaded.base.treeSha);
  const running = await currentImages(files, config, input.environment);
  // On a unit's PR only the unit's images are rolled back.
  if (input.unit)
    for (const name of Object.keys(running)) if (!input.unit.images.includes(name)) delete running[name];
  let pins: Pins = {};
  if (input.image) {
    if (!(input.image.name in config.images))
      throw new UserError("unknown-image", `unknown image ${input.image.name}`);
    pins[input.image.name] = await resolvePin(deps, loaded, input.image);
  } else {
    const { state } = await loadState(deps);
    pins = await previousVersions(deps, loaded, state, input.environment, running);
    if (Object.keys(pins).length === 0) {
      const names = Object.keys(running).filter((name) => name in config.images);
      const oldest = names
        .map((name) => `${name} older than ${running[name]!.tag ?? shortDigest(running[name]!.digest)}`)
        .join(", ");
      throw new UserError(
        "no-previous",
        `no version of ${oldest || "any image"} is recorded for ${input.environment}; name one: /rollback ${input.environment} image@tag`,
      );
    }
  }
  await input.allow?.(Object.keys(pins));
  const units = unitsOf(loaded, input, Object.keys(pins));
  // On a unit's PR the rollback holds that unit; elsewhere the whole environment.
  const held = describeUnit(input.unit ?? { environment: input.environment });
  await updateState(deps, loaded, (state) => {
    setUnitHold(state, input.environment, input.unit?.group, undefined);
    setUnitHold(state, input.environment, input.unit?.group, {
      by: input.by,
      at: deps.now().toISOString(),
      reason: "rollback",
    });
    for (const name of Object.keys(pins)) {
      const tag = running[name]?.tag;
      const floors = (state.floors[input.environment] ??= {});
      const floor = floors[name];
      // A second rollback must not lower the floor the first one set (1.9 stays refused after 1.8).
      const policy = environmentPolicy(config, input.environment, name);
      if (tag !== undefined && (floor === undefined || isNewer(tag, floor, policy) === true))
        floors[name] = tag;
    }
  });
  const replies: UnitReply[] = [];
  for (const unit of units) {
    const plan = await planEnvironment(
      { registry: deps.registryFor(config), files, now: deps.now(), secrets: deps.secrets },
      config,
      input.environment,
      { pins, images: unit.images.filter((image) => image in pins) },
    );
    replies.push(
      await upsertUnit(deps, loaded, input, "rollback", unit, plan, {
        policy: "rollback",
        note: `Requested by @${input.by} with /rollback. ${held} is on hold until /unhold ${input.environment}.`,
      }),
    );
  }
  const answer = joinReplies(replies, held);
  return answer && `${answer} ${held} is on hold until \`/unhold ${input.environment}\`.`;
}

/** One unit's answer to `/promote` or `/rollback`: what its upsert did, and the reply line. */
interface UnitReply {
  action: UpsertResult["action"];
  text: string;
}

/**
 * Writes one unit's PR for `/promote` or `/rollback` under the unit's lock (its body rows are read
 * inside it), then records the command's window override for the PR's head: the unit's reply.
 */
async function upsertUnit(
  deps: AppDeps<Promoting>,
  loaded: LoadedConfig,
  input: PromoteInput,
  command: "promote" | "rollback",
  unit: UnitImages,
  plan: EnvironmentPlan,
  body: { policy: string | undefined; note: string },
): Promise<UnitReply> {
  const upsert = await deps.locks.run(unitLock(deps, unit.branch), async () =>
    upsertPromotionPr(deps, {
      loaded,
      plan,
      ...(unit.group ? { group: unit.group } : {}),
      kind: command,
      requestedBy: input.by,
      rows: await bodyRows(deps, loaded.config, input.environment, plan, body.policy),
      note: body.note,
      ...(input.issueNumber !== undefined ? { requestedIn: input.issueNumber } : {}),
    }),
  );
  return {
    action: upsert.action,
    text: await withWindowOverride(deps, loaded, input, command, upsert, reply(describeUnit(unit), upsert)),
  };
}

/**
 * The units a command acts on: the one it was given on, else those holding `images` (every image
 * of the environment by default). An image named outside the unit is refused.
 */
function unitsOf(loaded: LoadedConfig, input: PromoteInput, images?: string[]): UnitImages[] {
  if (!input.unit) return promotionUnits(loaded.config, input.environment, images);
  const outside = (images ?? []).filter((image) => !input.unit!.images.includes(image));
  if (outside.length > 0)
    throw new UserError(
      "other-unit",
      `${outside.join(", ")} is not in ${describeUnit(input.unit)}; give the command on its own PR or on an issue`,
    );
  return [input.unit];
}

/**
 * The replies of the units in one: "" when every PR was opened or updated (🚀 says it all); the
 * units with nothing to change are named only when no unit had anything.
 */
function joinReplies(replies: UnitReply[], scope: string): string {
  const acted = replies.filter((entry) => entry.action !== "none");
  if (acted.length === 0) return `${scope} already runs that; nothing to change.`;
  return acted
    .map((entry) => entry.text)
    .filter((text) => text.length > 0)
    .join("\n");
}

/** Per image, the version before the one running now in the environment's history. */
async function previousVersions(
  deps: Pick<AppDeps, "registryFor">,
  loaded: LoadedConfig,
  state: FerryState,
  environment: string,
  running: Record<string, { tag?: string; digest?: string }>,
): Promise<Pins> {
  const pins: Pins = {};
  for (const [image, now] of Object.entries(running)) {
    const config = loaded.config.images[image];
    if (!config) continue;
    const before = versionBefore(state, environment, image, now);
    if (!before) continue;
    const digest =
      before.digest ??
      (before.tag
        ? await deps.registryFor(loaded.config).resolveDigest(config.repository, before.tag)
        : undefined);
    if (digest) pins[image] = { ...(before.tag ? { tag: before.tag } : {}), digest };
  }
  return pins;
}

async function resolvePin(
  deps: Pick<AppDeps, "registryFor">,
  loaded: LoadedConfig,
  image: { name: string; tag: string },
): Promise<{ tag: string; digest: string }> {
  const config = loaded.config.images[image.name];
  if (!config) throw new UserError("unknown-image", `unknown image ${image.name}`);
  // Re-read the registry: a command names a tag, the registry says what it is now.
  const digest = await deps.registryFor(loaded.config).resolveDigest(config.repository, image.tag);
  return { tag: image.tag, digest };
}

async function requireSoaked(
  deps: AppDeps<Promoting>,
  loaded: LoadedConfig,
  upstream: string,
  soak: SoakConfig | undefined,
  environment: string,
  by: string,
): Promise<void> {
  const pending = await soakPending(deps, loaded, upstream, soak);
  if (pending === undefined) return;
  notifyBlocked(deps, loaded.config, {
    environment,
    reason: "soak",
    detail: pending.reason,
    occurrence: `promote:${loaded.base.sha}:${by}`,
    requestedBy: by,
  });
  throw new UserError(pending.code, pending.reason);
}

/**
 * The reply to the command, or "" when the 🚀 says it all: a PR opened or updated links back to the
 * comment's issue (`Requested in #n`), which GitHub shows on both sides; a reason is owed only with
 * 👎, and the reply would cost a request per promotion (docs/architecture.md "Request budget").
 */
function reply(environment: string, upsert: UpsertResult): string {
  switch (upsert.action) {
    case "opened":
    case "updated":
      return upsert.notice ?? "";
    case "unchanged":
      return `#${upsert.pull.number} already carries this for ${environment}.`;
    default:
      return `${environment} already runs that; nothing to change.`;
  }
}
