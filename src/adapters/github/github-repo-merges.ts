import type { AllowedMergeMethods, MergeMethod } from "../../core/pr/merge-method.js";
import { mayPassOnRetry } from "../../core/errors.js";
import type { GitHubMerges, PullRequestInfo } from "../../app/github-port.js";
import { type GitHubRepoContext, message, orUndefinedOn404, status } from "./github-repo-context.js";

/** What Ferry reads of a rule from `GET /rules/branches/{branch}`. */
interface RuleShape {
  type: string;
  parameters?: {
    required_status_checks?: { context: string }[];
    strict_required_status_checks_policy?: boolean;
  };
}

/**
 * Merges: native auto-merge, merge queues, Ferry's own sha-pinned merge and what the branch
 * requires before one (`GitHubMerges`).
 */
export function mergesOf(ctx: GitHubRepoContext): Required<GitHubMerges> {
  return {
    enableAutoMerge: (pull, expectedHead, method) => enableAutoMerge(ctx, pull, expectedHead, method),
    enqueuePull: (pull, expectedHead) => enqueuePull(ctx, pull, expectedHead),
    disableAutoMerge: (pull) => disableAutoMerge(ctx, pull),
    merge: (number, sha, method) => merge(ctx, number, sha, method),
    allowedMergeMethods: () => allowedMergeMethods(ctx),
    // GitHub includes the setting only for tokens that may see it.
    allowsAutoMerge: async () => (await ctx.readRepository()).allow_auto_merge,
    requiredChecks: (branch) => requiredChecks(ctx, branch),
    hasMergeQueue: (branch) => hasMergeQueue(ctx, branch),
    upToDateRequired: (branch) => upToDateRequired(ctx, branch),
  };
}

async function enableAutoMerge(
  ctx: GitHubRepoContext,
  pull: PullRequestInfo,
  expectedHead: string,
  method: MergeMethod,
): Promise<"enabled" | "clean" | "not-yet" | "unavailable"> {
  try {
    // expectedHeadOid: GitHub refuses when the head is no longer the commit Ferry wrote.
    await ctx.octokit.graphql(
      `mutation($id: ID!, $head: GitObjectID, $mergeMethod: PullRequestMergeMethod) { enablePullRequestAutoMerge(input: { pullRequestId: $id, mergeMethod: $mergeMethod, expectedHeadOid: $head }) { clientMutationId } }`,
      { id: pull.nodeId, head: expectedHead, mergeMethod: method.toUpperCase() },
    );
    return "enabled";
  } catch (error) {
    // GitHub refuses auto-merge for a PR that may merge now ("Pull request is in clean status")
    // and in `unstable` status, which it also reports while mergeability is still computed
    // (https://github.com/peter-evans/enable-pull-request-automerge/issues/355).
    const text = message(error);
    if (/is in clean status/i.test(text)) return "clean";
    if (/is in unstable status/i.test(text)) return "not-yet";
    // Auto-merge not allowed on the repo, or its head moved: Ferry merges itself (only the
    // commit it wrote).
    return "unavailable";
  }
}

async function enqueuePull(
  ctx: GitHubRepoContext,
  pull: PullRequestInfo,
  expectedHead: string,
): Promise<"queued" | { refused: string }> {
  try {
    // https://docs.github.com/en/graphql/reference/mutations#enqueuepullrequest
    await ctx.octokit.graphql(
      `mutation($id: ID!, $head: GitObjectID) { enqueuePullRequest(input: { pullRequestId: $id, expectedHeadOid: $head }) { clientMutationId } }`,
      { id: pull.nodeId, head: expectedHead },
    );
    return "queued";
  } catch (error) {
    // GitHub's 5xx or rate limit is no refusal: the work is retried, not handed to a person.
    if (mayPassOnRetry(error)) throw error;
    const reason = message(error);
    // A second enqueue (another event for the same head) finds it queued: the state wanted.
    if (/already in the (merge )?queue/i.test(reason)) return "queued";
    return { refused: reason };
  }
}

async function disableAutoMerge(ctx: GitHubRepoContext, pull: PullRequestInfo): Promise<void> {
  await ctx.octokit.graphql(
    `mutation($id: ID!) { disablePullRequestAutoMerge(input: { pullRequestId: $id }) { clientMutationId } }`,
    { id: pull.nodeId },
  );
}

async function merge(
  ctx: GitHubRepoContext,
  number: number,
  sha: string,
  method: MergeMethod,
): ReturnType<GitHubMerges["merge"]> {
  try {
    await ctx.octokit.rest.pulls.merge({
      ...ctx.r,
      pull_number: number,
      sha,
      merge_method: method,
    });
    return "merged";
  } catch (error) {
    const code = status(error);
    // "Head branch is out of date. Review and try the merge again." (a strict base; reported with
    // 405 and with 409): the PR is read again, and a `behind` one waits to be rebuilt.
    if ((code === 405 || code === 409) && /head branch is out of date/i.test(message(error)))
      return "not-mergeable";
    if (code === 409) return "head-moved";
    if (code === 405 && /base branch was modified/i.test(message(error))) return "base-moved";
    // "Squash merges are not allowed on this repository." (a repository setting, never transient)
    if (code === 405 && /not allowed on this repository/i.test(message(error))) return "method-refused";
    // "Changes must be made through the merge queue": the base has a merge queue.
    if (code === 405 && /merge queue/i.test(message(error))) return "queue-required";
    // "At least 1 approving review is required by reviewers with write access." (or changes
    // requested): it merges once people approve; Ferry retries on the review.
    if (code === 405 && /approving review|changes requested/i.test(message(error))) return "review-required";
    if (code === 405 || code === 422) return "not-mergeable";
    throw error;
  }
}

async function allowedMergeMethods(ctx: GitHubRepoContext): Promise<AllowedMergeMethods | undefined> {
  const data = await ctx.readRepository();
  const { allow_squash_merge: squash, allow_merge_commit: merge, allow_rebase_merge: rebase } = data;
  // GitHub includes these settings only for tokens that may see them.
  if (squash === undefined || merge === undefined || rebase === undefined) return undefined;
  return { squash, merge, rebase };
}

async function requiredChecks(ctx: GitHubRepoContext, branch: string): Promise<string[] | undefined> {
  // Classic branch protection: the branch endpoint shows the required contexts without needing
  // the administration permission. Repository rulesets require checks too
  // (`required_status_checks` rules, https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch,
  // readable with metadata access); GitHub enforces both.
  const [response, rules] = await Promise.all([
    orUndefinedOn404(ctx.octokit.rest.repos.getBranch({ ...ctx.r, branch })),
    branchRules(ctx, branch),
  ]);
  const checks = response?.data.protected ? response.data.protection?.required_status_checks : undefined;
  const fromRules = rules.flatMap((rule) =>
    rule.type === "required_status_checks"
      ? (rule.parameters?.required_status_checks ?? []).map((check) => check.context)
      : [],
  );
  if (!response?.data.protected && !rules.some((rule) => rule.type === "required_status_checks"))
    return undefined;
  return [
    ...new Set([
      ...(checks?.contexts ?? []),
      ...(checks?.checks ?? []).map((check) => check.context),
      ...fromRules,
    ]),
  ];
}

async function hasMergeQueue(ctx: GitHubRepoContext, branch: string): Promise<boolean> {
  return (await branchRules(ctx, branch)).some((rule) => rule.type === "merge_queue");
}

async function upToDateRequired(ctx: GitHubRepoContext, branch: string): Promise<boolean> {
  // "Require branches to be up to date before merging" in a ruleset
  // (https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch).
  return (await branchRules(ctx, branch)).some(
    (rule) =>
      rule.type === "required_status_checks" &&
      rule.parameters?.strict_required_status_checks_policy === true,
  );
}

/** The ruleset rules that apply to a branch (none when the endpoint is unknown, e.g. an older GHES). */
async function branchRules(ctx: GitHubRepoContext, branch: string): Promise<RuleShape[]> {
  const response = await orUndefinedOn404(
    ctx.octokit.rest.repos.getBranchRules({ ...ctx.r, branch, per_page: 100 }),
  );
  return (response?.data ?? []) as RuleShape[];
}
