import { TransientError, UserError } from "../core/errors.js";
import { RuleViolationError } from "../core/rule-violation.js";
import type { LoadedConfig } from "./app-deps.js";
import type { AppDeps } from "./app-deps.js";
import type { BranchInfo, GitHubBranches } from "./github-port.js";
import type { EnvironmentPlan } from "./plan-environment.js";

/** How many times a read-modify-write of the branch is redone after losing a race (docs/reliability.md row 22). */
const MAX_REF_ATTEMPTS = 5;

export interface WriteBranchInput {
  branch: string;
  plan: EnvironmentPlan;
  message: string;
  /** No open PR: the branch is probably gone, so creating it is tried first. */
  probablyNew: boolean;
  /** The tree of the plan's files on the base, when a commit of it was already written. */
  treeSha?: string;
  /** Judges each tip before writing on it; when it says so, nothing is written. */
  yieldTo?: (tip: BranchInfo) => Promise<boolean>;
  /**
   * Whether the base requires branches to be up to date before merging (asked only when linear
   * history refuses the usual commit): then the branch is rebuilt on the base instead.
   */
  upToDateRequired?: () => Promise<boolean>;
}

/**
 * Writes the plan's files as one commit whose first parent is the current base tip and moves
 * `ferry/<env>` to it without force. When the branch exists, its head is the second parent, so the
 * update is a fast-forward that also brings the branch up to date with the base (what `PUT
 * /pulls/{n}/update-branch` would do, but a commit Ferry wrote and sealed): if someone else moved
 * the branch meanwhile, GitHub answers 422 and the read-modify-write is redone from the new tip
 * (compare-and-swap, docs/reliability.md row 22). Where a ruleset requires linear history, the same
 * tree goes on the head as a single-parent commit instead (row 58), or, when the base also requires
 * up-to-date branches, on the base tip itself, moved onto the branch by a forced compare-and-swap
 * (row 75). Answers the head written, or undefined when `yieldTo` said to leave the tip alone.
 */
export async function writeBranch(
  deps: AppDeps<GitHubBranches>,
  loaded: LoadedConfig,
  input: WriteBranchInput,
): Promise<string | undefined> {
  const { branch, plan, message, yieldTo } = input;
  // Every commit but the one on a workflow-refused head carries the same tree (the plan's files on
  // the base): it is written once, and each later attempt is one write, not two.
  let planTree = input.treeSha;
  const commitOn = async (parents: string[]) => {
    const commit = await deps.github.createCommit(
      planTree !== undefined
        ? { treeSha: planTree, parents, message }
        : { baseTreeSha: loaded.base.treeSha, files: plan.files, parents, message },
    );
    planTree = commit.treeSha;
    return commit;
  };
  const onBase = () => commitOn([loaded.base.sha]);
  if (input.probablyNew) {
    // No open PR: the branch is usually gone (deleted on merge), so try to create it directly and
    // fall back to the read-modify-write below when it exists after all (docs/reliability.md row 23).
    const commit = await onBase();
    if ((await deps.github.createRef(branch, commit.sha)) === "created") return commit.sha;
  }
  for (let attempt = 0; attempt < MAX_REF_ATTEMPTS; attempt++) {
    const head = await deps.github.getBranch(branch);
    // Another replica wrote this very plan a moment ago (both found no branch): its commit is the
    // head, since a commit of ours on top would leave the PR it opens naming a head that is no
    // longer there (docs/reliability.md row 80). Judged before `yieldTo`, which reads the tip's files.
    if (head && isPlanOnBase(head, planTree, loaded.base.sha)) return head.sha;
    if (head && yieldTo && (await yieldTo(head))) return undefined;
    const parents = head && head.sha !== loaded.base.sha ? [loaded.base.sha, head.sha] : [loaded.base.sha];
    const commit = await commitOn(parents);
    let moved: Awaited<ReturnType<GitHubBranches["updateRef"] | GitHubBranches["createRef"]>>;
    try {
      moved = head
        ? await deps.github.updateRef(branch, commit.sha)
        : await deps.github.createRef(branch, commit.sha);
    } catch (error) {
      if (!head || parents.length < 2 || !refusesMergeCommitsOnly(error)) throw error;
      const linear = await linearWrite(deps, input, head, onBase, commitOn);
      if (linear !== "conflict") return linear;
      deps.log.warn({ branch, attempt }, "branch moved while writing; redoing from the new tip");
      continue;
    }
    if (moved === "created") return commit.sha;
    if (moved === "updated") return commit.sha;
    if (head && moved === "workflow-refused") {
      // The base changed `.github/workflows/*` since the branch was cut, and moving the branch onto
      // it counts as changing a workflow, which needs the `workflows` permission Ferry does not ask
      // for. Instead the commit goes on the branch's own head: the PR's change stays the plan's
      // files only, and GitHub merges it onto the current base.
      const onHead = await deps.github.createCommit({
        baseTreeSha: head.treeSha,
        parents: [head.sha],
        files: plan.files,
        message,
      });
      const again = await deps.github.updateRef(branch, onHead.sha);
      if (again === "updated") {
        deps.log.info({ branch }, "base changed workflows: commit written on the branch's head");
        return onHead.sha;
      }
      if (again === "workflow-refused")
        throw new UserError(
          "workflow-permission",
          `${branch} carries a change to .github/workflows, which Ferry may not write without the workflows permission; delete the branch so that Ferry opens a new PR`,
        );
    }
    deps.log.warn({ branch, attempt }, "branch moved while writing; redoing from the new tip");
  }
  throw new TransientError("branch-contended", `${branch} kept moving; will retry later`);
}

/** The tip holds exactly the plan's tree with the current base as first parent: what a write would make. */
function isPlanOnBase(tip: BranchInfo, planTree: string | undefined, baseSha: string): boolean {
  return planTree !== undefined && tip.treeSha === planTree && tip.parents[0] === baseSha;
}

/**
 * A ruleset's required_linear_history refused the merge commit. Without "require branches to be
 * up to date", the same tree goes on the branch's head as a single-parent commit (row 58): GitHub
 * merges it onto the base all the same, and the PR's diff may show the base's newer changes too.
 * With it, a commit on the head would stay behind the base for ever and one with both parents is
 * refused, so the branch is rebuilt: one single-parent commit on the base tip, moved onto the
 * branch by a forced update that only lands while the branch is still at `head` (row 75). A
 * ruleset that also blocks force pushes refuses that in its own words (RuleViolationError).
 */
async function linearWrite(
  deps: AppDeps<GitHubBranches>,
  input: WriteBranchInput,
  head: BranchInfo,
  onBase: () => Promise<{ sha: string }>,
  commitOn: (parents: string[]) => Promise<{ sha: string }>,
): Promise<string | "conflict"> {
  const { branch } = input;
  if (deps.github.replaceRef && (await input.upToDateRequired?.()) === true) {
    const rebuilt = await onBase();
    if ((await deps.github.replaceRef(branch, rebuilt.sha, head.sha)) === "conflict") return "conflict";
    deps.log.info({ branch }, "linear history and up-to-date branches required: branch rebuilt on the base");
    return rebuilt.sha;
  }
  const linear = await commitOn([head.sha]);
  if ((await deps.github.updateRef(branch, linear.sha)) !== "updated") return "conflict";
  deps.log.info({ branch }, "linear history required: single-parent commit on the branch's head");
  return linear.sha;
}

/** A ruleset refusal whose only broken rule is required_linear_history ("… must not contain merge commits."). */
function refusesMergeCommitsOnly(error: unknown): boolean {
  return (
    error instanceof RuleViolationError &&
    error.violations.length > 0 &&
    error.violations.every((text) => text.startsWith("This branch must not contain merge commits"))
  );
}
