import { createHmac, timingSafeEqual } from "node:crypto";
import { parseBody } from "../core/pr/body.js";
import { parseUnitBranch, sameGroup, type UnitGroup } from "../core/pr/branch.js";
import { planSealInput, type PlanBlock } from "../core/pr/plan-block.js";
import type { AppDeps } from "./app-deps.js";
import type { PullRequestInfo, RepoIdentity } from "./github-port.js";

/**
 * Which pull requests and commits Ferry believes (docs/security.md). A branch name proves nothing:
 * anyone with write access can push `ferry/staging` and open a PR from it, push a commit into
 * Ferry's own PR, or edit its body. So a PR is Ferry's only when the app opened it from a branch of
 * the same repository, its plan block is believed only when its seal verifies, and its head only
 * when it is the commit the sealed block names.
 */
export interface FerryPull {
  environment: string;
  /** The unit's group, from the branch name (docs/config.md "Grouping"); absent for `ferry/<env>`. */
  group?: UnitGroup;
  /** The plan Ferry wrote, when the body still carries it with a valid seal. */
  block?: PlanBlock;
  /** The head is the commit Ferry wrote (the sealed block names it). */
  headIsFerrys: boolean;
}

/** The seal for a block (its `seal` field is ignored), keyed by the app's secret. */
function sealOf(key: string, block: PlanBlock): string {
  return createHmac("sha256", key).update(planSealInput(block)).digest("hex");
}

/** The block with its seal: written into the PR body together with `head`, the commit just written. */
export function sealPlan(key: string, block: PlanBlock): PlanBlock {
  const { seal: _ignored, ...unsealed } = block;
  return { ...unsealed, seal: sealOf(key, unsealed) };
}

function sealVerifies(key: string, block: PlanBlock): boolean {
  if (block.seal === undefined) return false;
  const expected = Buffer.from(sealOf(key, block), "hex");
  const given = Buffer.from(block.seal, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Ferry's view of a PR: undefined when Ferry did not open it (whatever its branch or body says). */
export function ferryPull(deps: AppDeps<RepoIdentity>, pull: PullRequestInfo): FerryPull | undefined {
  const unit = parseUnitBranch(pull.headRef);
  if (unit === undefined) return undefined;
  const { environment, group } = unit;
  if (deps.appLogin === undefined || pull.author !== deps.appLogin) return undefined;
  const repository = `${deps.github.owner}/${deps.github.repo}`.toLowerCase();
  if (pull.headRepo?.toLowerCase() !== repository) return undefined;
  const parsed = parseBody(pull.body);
  const block =
    parsed &&
    parsed.environment === environment &&
    sameGroup(parsed.group, group) &&
    sealVerifies(deps.sealKey, parsed)
      ? parsed
      : undefined;
  return {
    environment,
    ...(group ? { group } : {}),
    ...(block ? { block } : {}),
    headIsFerrys: block?.head !== undefined && block.head === pull.headSha,
  };
}
