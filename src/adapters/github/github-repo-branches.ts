import { mayPassOnRetry } from "../../core/errors.js";
import type { BranchInfo, CommitInput, GitHubBranches } from "../../app/github-port.js";
import { type GitHubRepoContext, message, orUndefinedOn404, status } from "./github-repo-context.js";
import {
  ruleViolations,
  RuleViolationError,
  rulesFingerprint,
  type BranchRule,
  type RulesetVersion,
} from "../../core/rule-violation.js";

/** Pages of rules or rulesets read for a fingerprint (100 each). */
const MAX_RULE_PAGES = 5;

/** Branches: read, committed to and moved by compare-and-swap (`GitHubBranches`). */
export function branchesOf(ctx: GitHubRepoContext): Required<GitHubBranches> {
  return {
    defaultBranch: () => defaultBranch(ctx),
    getBranch: (name) => getBranch(ctx, name),
    createCommit: (input) => createCommit(ctx, input),
    createRef: (branch, sha) => createRef(ctx, branch, sha),
    updateRef: (branch, sha) => updateRef(ctx, branch, sha),
    replaceRef: (branch, sha, expected) => replaceRef(ctx, branch, sha, expected),
    branchRulesFingerprint: (branch) => branchRulesFingerprint(ctx, branch),
  };
}

/** The refusal of a repository ruleset (422 "Repository rule violations found …"), as a typed error. */
function ruleRefusal(error: unknown, branch: string): RuleViolationError | undefined {
  if (status(error) !== 422) return undefined;
  const violations = ruleViolations(message(error));
  return violations ? new RuleViolationError(branch, violations) : undefined;
}

async function defaultBranch(ctx: GitHubRepoContext): Promise<string> {
  return (await ctx.readRepository()).default_branch;
}

async function getBranch(ctx: GitHubRepoContext, name: string): Promise<BranchInfo | undefined> {
  const response = await orUndefinedOn404(ctx.octokit.rest.repos.getBranch({ ...ctx.r, branch: name }));
  if (!response) return undefined;
  const { data } = response;
  return {
    sha: data.commit.sha,
    treeSha: data.commit.commit.tree.sha,
    parents: data.commit.parents.map((parent) => parent.sha),
    protected: data.protected,
  };
}

async function createCommit(ctx: GitHubRepoContext, input: CommitInput) {
  const tree =
    "treeSha" in input
      ? input.treeSha
      : // Inline content: GitHub creates the blobs, one request instead of one per file.
        (
          await ctx.octokit.rest.git.createTree({
            ...ctx.r,
            base_tree: input.baseTreeSha,
            tree: Object.entries(input.files).map(([path, content]) => ({
              path,
              mode: "100644" as const,
              type: "blob" as const,
              content,
            })),
          })
        ).data.sha;
  const commit = await ctx.octokit.rest.git.createCommit({
    ...ctx.r,
    message: input.message,
    tree,
    parents: input.parents,
  });
  // Once merged, these files are on the base: reading them back costs nothing.
  if ("files" in input)
    for (const content of Object.values(input.files)) ctx.cache?.rememberWrittenBlob(ctx.fullName, content);
  return { sha: commit.data.sha, treeSha: tree };
}

async function createRef(ctx: GitHubRepoContext, branch: string, sha: string): Promise<"created" | "exists"> {
  try {
    await ctx.octokit.rest.git.createRef({ ...ctx.r, ref: `refs/heads/${branch}`, sha });
    return "created";
  } catch (error) {
    if (status(error) === 422 && /already exists/i.test(message(error))) return "exists";
    throw ruleRefusal(error, branch) ?? error;
  }
}

async function updateRef(
  ctx: GitHubRepoContext,
  branch: string,
  sha: string,
): Promise<"updated" | "conflict" | "workflow-refused"> {
  try {
    await ctx.octokit.rest.git.updateRef({ ...ctx.r, ref: `heads/${branch}`, sha, force: false });
    return "updated";
  } catch (error) {
    // "refusing to allow a GitHub App to create or update workflow … without `workflows`
    // permission" (https://github.com/chdsbd/kodiak/issues/853).
    if (/without `?workflows`? permission/i.test(message(error))) return "workflow-refused";
    if (status(error) !== 422) throw error;
    const refused = ruleRefusal(error, branch);
    if (refused) throw refused;
    // "Reference already equals our commit" is success (docs/reliability.md row 22).
    const current = await orUndefinedOn404(ctx.octokit.rest.git.getRef({ ...ctx.r, ref: `heads/${branch}` }));
    return current?.data.object.sha === sha ? "updated" : "conflict";
  }
}

async function replaceRef(
  ctx: GitHubRepoContext,
  branch: string,
  sha: string,
  expected: string,
): Promise<"updated" | "conflict"> {
  const repositoryId = (await ctx.readRepository()).node_id;
  try {
    // https://docs.github.com/en/graphql/reference/mutations#updaterefs: a forced move that only
    // lands while the ref is still at `beforeOid`, which `PATCH /git/refs` with force cannot say.
    await ctx.octokit.graphql(
      `mutation($repositoryId: ID!, $refUpdates: [RefUpdate!]!) { updateRefs(input: { repositoryId: $repositoryId, refUpdates: $refUpdates }) { clientMutationId } }`,
      {
        repositoryId,
        refUpdates: [{ name: `refs/heads/${branch}`, afterOid: sha, beforeOid: expected, force: true }],
      },
    );
    return "updated";
  } catch (error) {
    if (mayPassOnRetry(error)) throw error;
    const violations = ruleViolations(message(error));
    if (violations) throw new RuleViolationError(branch, violations);
    // Anything else (the branch moved, most likely): the caller reads the branch again.
    const current = await orUndefinedOn404(ctx.octokit.rest.git.getRef({ ...ctx.r, ref: `heads/${branch}` }));
    return current?.data.object.sha === sha ? "updated" : "conflict";
  }
}

async function branchRulesFingerprint(ctx: GitHubRepoContext, branch: string): Promise<string | undefined> {
  // Both need only read access ("Metadata" read for an app):
  // https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch, …#get-all-repository-rulesets.
  try {
    const rules: BranchRule[] = [];
    const rulesets: RulesetVersion[] = [];
    for (let page = 1; page <= MAX_RULE_PAGES; page++) {
      const { data } = await ctx.octokit.rest.repos.getBranchRules({
        ...ctx.r,
        branch,
        per_page: 100,
        page,
      });
      for (const rule of data)
        rules.push({
          type: rule.type,
          rulesetId: rule.ruleset_id,
          parameters: "parameters" in rule ? rule.parameters : undefined,
        });
      if (data.length < 100) break;
    }
    for (let page = 1; page <= MAX_RULE_PAGES; page++) {
      const { data } = await ctx.octokit.rest.repos.getRepoRulesets({ ...ctx.r, per_page: 100, page });
      for (const r of data)
        rulesets.push({
          id: r.id,
          ...(r.updated_at ? { updatedAt: r.updated_at } : {}),
          enforcement: r.enforcement,
        });
      if (data.length < 100) break;
    }
    return rulesFingerprint(rules, rulesets);
  } catch (error) {
    if (status(error) === 403 || status(error) === 404) return undefined;
    throw error;
  }
}
