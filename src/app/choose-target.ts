/**
 * The version one image should move to in one environment: the pinned value of a promotion or
 * rollback (its digest checked, its signature re-verified), or the tag its policy admits above the
 * floor, eligible under CI gating and signed under `verify`. Registry reads only; planEnvironment
 * (plan-environment.ts) turns the choice into edits.
 */
import { UserError } from "../core/errors.js";
import { isValidDigest, shortDigest } from "../core/image-ref.js";
import type { Policy } from "../core/policy/schema.js";
import { notSignedReason, type SignatureCheck, type VerifyPolicy } from "../core/policy/verify.js";
import {
  isNewer,
  mayDowngrade,
  metadataNeeds,
  outsidePolicyNotice,
  rankTags,
  selectTag,
  type Selection,
  type TagCandidate,
} from "../core/policy/select-tag.js";
import { gateWaitMessage } from "../core/policy/ci-gating.js";
import type { CurrentImage, PlanDependencies, PlanOptions } from "./plan-inputs.js";
import type { ImageDescription, RegistryReader } from "./ports.js";

/** How many candidate tags are described (manifest + config GET) before giving up on metadata policies. */
const MAX_DESCRIBED_CANDIDATES = 50;

/** A newer tag held back: by CI gating or by its signature (a `blocked` notification, notifications.ts). */
export interface HeldBack {
  reason: "gating" | "signature";
  tag: string;
}

export type Target = (
  { tag?: string; digest: string; reason: string; revision?: string } | { unchanged: string }
) & { notice?: string; heldBack?: HeldBack };

export async function pinnedTarget(
  registry: RegistryReader,
  repository: string,
  pin: { tag?: string; digest: string },
  policy: Policy,
): Promise<Target> {
  if (!isValidDigest(pin.digest))
    throw new UserError("invalid-digest", `invalid digest ${JSON.stringify(pin.digest)}`);
  // The pinned digest must exist: a promotion never writes a reference the registry cannot serve.
  const description = await registry.describe(repository, pin.digest);
  // A promotion re-checks the exact digest it carries: upstream having run it proves nothing.
  if (policy.verify !== undefined) {
    const check = await checkSignature(registry, repository, description.digest, policy.verify);
    if (!check.verified) {
      const reason = notSignedReason(
        pin.tag ?? shortDigest(description.digest),
        policy.verify,
        `${shortDigest(description.digest)}: ${check.reason}`,
      );
      return { unchanged: reason, notice: reason };
    }
  }
  const target: Target = {
    digest: description.digest,
    reason: `pinned to ${pin.tag ?? ""}@${shortDigest(pin.digest)}`,
  };
  if (pin.tag !== undefined) target.tag = pin.tag;
  if (description.revision !== undefined) target.revision = description.revision;
  return target;
}

/** One image of one environment: its config name, repository, effective policy and what runs now. */
export interface ImageToChoose {
  name: string;
  repository: string;
  policy: Policy;
  current: CurrentImage;
}

export async function chooseTarget(
  deps: PlanDependencies,
  image: ImageToChoose,
  options: PlanOptions,
): Promise<Target> {
  const target = await chooseByPolicy(deps, image, options);
  // Whichever route chose, a running tag outside the policy is worth a notice when it stays.
  if (target.notice === undefined && "unchanged" in target) {
    const notice = outsidePolicyNotice(image.policy, image.current.tag);
    if (notice !== undefined) target.notice = notice;
  }
  return target;
}

async function chooseByPolicy(
  deps: PlanDependencies,
  { name, repository, policy, current }: ImageToChoose,
  options: PlanOptions,
): Promise<Target> {
  if (policy.strategy === "digest") {
    const tag = policy.tag!;
    const description = await deps.registry.describe(repository, tag);
    if (current.digest === description.digest)
      return { unchanged: `${tag} is still ${shortDigest(description.digest)}` };
    if (policy.verify !== undefined) {
      const check = await checkSignature(deps.registry, repository, description.digest, policy.verify);
      if (!check.verified) {
        const reason = notSignedReason(
          tag,
          policy.verify,
          `${shortDigest(description.digest)}: ${check.reason}`,
        );
        return { unchanged: reason, notice: reason };
      }
    }
    const target: Target = {
      tag,
      digest: description.digest,
      reason: `${tag} moved to ${shortDigest(description.digest)}`,
    };
    if (description.revision !== undefined) target.revision = description.revision;
    return target;
  }
  const tags = await deps.registry.listTags(repository);
  // A floor keeps Ferry from going back up to a tag a human reverted from; moving back on purpose
  // (allowDowngrade, running tag outside the policy) goes down, and the merge sets the new floor.
  const floor = mayDowngrade(policy, current.tag) ? undefined : options.floor?.[name];
  let ranked = rankTags(tags, policy, current.tag);
  if (floor !== undefined) ranked = ranked.filter((tag) => isNewer(tag, floor, policy) !== false);
  if (ranked.length === 0) {
    const selection = selectTag(
      tags.map((tag) => ({ tag })),
      withCurrent({ policy, now: deps.now }, current.tag),
    );
    return withNotice(selection, {
      unchanged:
        selection.kind === "none"
          ? selection.reason
          : `no tag newer than ${current.tag ?? "the current one"}`,
    });
  }
  const needs = metadataNeeds(policy);
  const describeAll = policy.strategy === "newest-build";
  const gated = options.eligible !== undefined;
  // Without metadata needs, the best-ranked tag wins; with them (a digest pin included: selectTag
  // refuses a candidate without its digest), walk the ranking best-first and describe only as
  // many tags as it takes (newest-build must see them all, up to a cap).
  if (!needs.created && !needs.platforms && !needs.digest && !describeAll && !gated) {
    // Every tag above the floor, not only the ranked ones, so that the reason counts all the tags
    // the policy admits (as `ferry select` does); selectTag itself skips those not newer than current.
    const aboveFloor =
      floor === undefined ? tags : tags.filter((tag) => isNewer(tag, floor, policy) !== false);
    const selection = selectTag(
      aboveFloor.map((tag) => ({ tag })),
      withCurrent({ policy, now: deps.now }, current.tag),
    );
    if (selection.kind === "none") return withNotice(selection, { unchanged: selection.reason });
    return withNotice(
      selection,
      withDescription(
        await deps.registry.describe(repository, selection.tag),
        selection.tag,
        selection.reason,
      ),
    );
  }
  const candidates: { candidate: TagCandidate; description: ImageDescription }[] = [];
  // The best-ranked tag held back by CI gating or refused for its signature: "why not?" must have
  // an answer, the same one on the plan, /status and the dashboard.
  let heldBack: string | undefined;
  let heldBackBy: HeldBack | undefined;
  for (const tag of ranked.slice(0, MAX_DESCRIBED_CANDIDATES)) {
    const description = await deps.registry.describe(repository, tag);
    const candidate: TagCandidate = { tag, digest: description.digest, platforms: description.platforms };
    if (description.created) candidate.created = description.created;
    const gate = options.eligible ? await options.eligible(name, tag, description) : true;
    if (gate !== true) {
      heldBack ??= gateWaitMessage(tag, gate === false ? "its source commit has not passed CI" : gate);
      heldBackBy ??= { reason: "gating", tag };
      continue;
    }
    if (policy.verify !== undefined) {
      // Checked after the cheaper gates; the result goes into the pure selection as data.
      candidate.signature = await checkSignature(
        deps.registry,
        repository,
        description.digest,
        policy.verify,
      );
      if (!candidate.signature.verified) {
        heldBack ??= notSignedReason(tag, policy.verify, candidate.signature.reason);
        heldBackBy ??= { reason: "signature", tag };
        continue;
      }
    }
    if (!describeAll) {
      const selection = selectTag([candidate], withCurrent({ policy, now: deps.now }, current.tag));
      if (selection.kind === "selected")
        return withHeldBack(
          withNotice(selection, withDescription(description, tag, selection.reason)),
          heldBack,
          heldBackBy,
        );
      continue;
    }
    candidates.push({ candidate, description });
  }
  if (!describeAll) {
    const checked = Math.min(ranked.length, MAX_DESCRIBED_CANDIDATES);
    if (heldBack !== undefined)
      return {
        unchanged: `${heldBack}; none of the ${checked} newest admitted tags passed ${gated ? "CI gating and " : ""}${policy.verify !== undefined ? "the signature check and " : ""}the policy`,
        notice: heldBack,
        ...(heldBackBy ? { heldBack: heldBackBy } : {}),
      };
    return {
      unchanged: `none of the ${checked} newest admitted tags passed ${gated ? "CI gating and " : ""}the policy`,
    };
  }
  const selection = selectTag(
    candidates.map((c) => c.candidate),
    withCurrent({ policy, now: deps.now }, current.tag),
  );
  if (selection.kind === "none")
    return withHeldBack(
      withNotice(selection, {
        unchanged: heldBack !== undefined ? `${heldBack}; ${selection.reason}` : selection.reason,
      }),
      heldBack,
      heldBackBy,
    );
  const chosen = candidates.find((c) => c.candidate.tag === selection.tag)!;
  return withHeldBack(
    withNotice(selection, withDescription(chosen.description, selection.tag, selection.reason)),
    heldBack,
    heldBackBy,
  );
}

/**
 * A newer tag held back (CI gating, a missing signature) is worth a notice even when an older
 * eligible one is chosen.
 */
function withHeldBack(target: Target, heldBack: string | undefined, by: HeldBack | undefined): Target {
  if (heldBack !== undefined && target.notice === undefined) {
    target.notice = heldBack;
    if (by) target.heldBack = by;
  }
  return target;
}

export async function checkSignature(
  registry: RegistryReader,
  repository: string,
  digest: string,
  verify: VerifyPolicy,
): Promise<SignatureCheck> {
  // Fail closed: a reader that cannot look for signatures admits nothing under verify.
  if (registry.checkSignature === undefined)
    return { verified: false, reason: "this registry reader cannot check signatures" };
  return registry.checkSignature(repository, digest, verify);
}

function withNotice(selection: Selection, target: Target): Target {
  if (selection.notice !== undefined) target.notice = selection.notice;
  return target;
}

function withCurrent(
  options: { policy: Policy; now: Date },
  current: string | undefined,
): { policy: Policy; now: Date; current?: string } {
  return current === undefined ? options : { ...options, current };
}

function withDescription(description: ImageDescription, tag: string, reason: string): Target {
  const target: Target = { tag, digest: description.digest, reason };
  if (description.revision !== undefined) target.revision = description.revision;
  return target;
}
