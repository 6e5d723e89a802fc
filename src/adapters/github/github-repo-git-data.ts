import type { HistoryCommit } from "../../core/history/history-entry.js";
import { mayPassOnRetry, UserError } from "../../core/errors.js";
import type {
  BranchInfo,
  GitHubBranches,
  GitHubContents,
  GitHubStateRef,
  TreeEntry,
} from "../../app/github-port.js";
import { STATE_FILE, STATE_REF } from "../../app/github-port.js";
import { type GitHubRepoContext, message, orUndefinedOn404, status } from "./github-repo-context.js";
import { shortSha } from "../../core/commit-sha.js";
import {
  ruleViolations,
  RuleViolationError,
  rulesFingerprint,
  type BranchRule,
  type RulesetVersion,
} from "../../core/rule-violation.js";

/** Pages of rules or rulesets read for a fingerprint (100 each). */
const MAX_RULE_PAGES = 5;

/** The refusal of a repository ruleset (422 "Repository rule violations found …"), as a typed error. */
function ruleRefusal(error: unknown, branch: string): RuleViolationError | undefined {
  if (status(error) !== 422) return undefined;
  const violations = ruleViolations(message(error));
  return violations ? new RuleViolationError(branch, violations) : undefined;
}

/** The largest file read through the contents API fallback (the state and config files are small). */
const MAX_READ_BYTES = 4 * 1024 * 1024;

/**
 * Git data: files and trees of a commit, branches written by compare-and-swap, and the state ref
 * (`GitHubContents`, `GitHubBranches`, `GitHubStateRef`).
 */
export function gitDataOf(
  ctx: GitHubRepoContext,
): Required<GitHubContents> & Required<GitHubBranches> & GitHubStateRef {
  async function defaultBranch(): Promise<string> {
    return (await ctx.readRepository()).default_branch;
  }

  async function getBranch(name: string): Promise<BranchInfo | undefined> {
    const response = await orUndefinedOn404(ctx.octokit.rest.repos.getBranch({ ...ctx.r, branch: name }));
    if (!response) return undefined;
    const { data } = response;
    return { sha: data.commit.sha, treeSha: data.commit.commit.tree.sha, protected: data.protected };
  }

  async function readFile(ref: string, path: string): Promise<string | undefined> {
    // The contents API's `ref` is "the name of the commit/branch/tag"
    // (https://docs.github.com/en/rest/repos/contents#get-repository-content): a ref elsewhere,
    // such as the state ref, is read at the commit the refs API gives for it.
    const at = /^refs\/(?!heads\/|tags\/)/.test(ref) ? await refCommit(ref) : ref;
    if (at === undefined) return undefined;
    const response = await orUndefinedOn404(ctx.octokit.rest.repos.getContent({ ...ctx.r, path, ref: at }));
    if (!response) return undefined;
    const data = response.data as { type?: string; content?: string; encoding?: string };
    if (Array.isArray(response.data) || data.type !== "file") {
      throw new UserError("unsafe-path", `${path} is not a regular file`);
    }
    if (data.encoding === "base64" && data.content !== undefined)
      return Buffer.from(data.content, "base64").toString("utf8");
    // Between 1 and 100 MB the contents API answers `encoding: "none"` and no content: the blob
    // API serves those (up to 100 MB), within Ferry's own limit for a file.
    const { sha, size } = response.data as { sha?: string; size?: number };
    if (data.encoding === "none" && sha !== undefined && (size ?? Infinity) <= MAX_READ_BYTES)
      return readBlob(sha);
    throw new UserError(
      "file-too-large",
      `${path} is too large to read${size !== undefined ? ` (${size} bytes)` : ""}`,
    );
  }

  async function listCommits(path: string, limit: number): Promise<HistoryCommit[]> {
    const commits: HistoryCommit[] = [];
    for (let page = 1; commits.length < limit; page++) {
      const per_page = Math.min(100, limit);
      const { data } = await ctx.octokit.rest.repos.listCommits({ ...ctx.r, path, per_page, page });
      for (const entry of data.slice(0, limit - commits.length)) {
        const commit: HistoryCommit = {
          sha: entry.sha,
          date: new Date(entry.commit.committer?.date ?? entry.commit.author?.date ?? 0),
          message: entry.commit.message,
        };
        const author = entry.author?.login ?? entry.commit.author?.name;
        if (author) commit.author = author;
        commits.push(commit);
      }
      if (data.length < per_page) break;
    }
    return commits;
  }

  async function listTree(treeSha: string, options: { recursive?: boolean } = {}): Promise<TreeEntry[]> {
    const recursive = options.recursive ?? true;
    const load = () => fetchTree(treeSha, recursive);
    // One level of a tree is cached apart from the recursive listing of the same SHA.
    if (ctx.cache) return ctx.cache.tree(ctx.fullName, recursive ? treeSha : `${treeSha}:1`, load);
    return load();
  }

  async function fetchTree(treeSha: string, recursive: boolean): Promise<TreeEntry[]> {
    const { data } = await ctx.octokit.rest.git.getTree({
      ...ctx.r,
      tree_sha: treeSha,
      ...(recursive ? { recursive: "true" } : {}),
    });
    // "If truncated is true in the response then the number of items in the tree array exceeded
    // our maximum limit" of 100,000 entries or 7 MB (https://docs.github.com/en/rest/git/trees#get-a-tree).
    if (data.truncated)
      throw new UserError(
        "tree-too-large",
        "GitHub cut the tree listing at its limit (100,000 entries or 7 MB in one request)",
      );
    return data.tree.flatMap((entry) => {
      if (entry.path === undefined || entry.sha === undefined) return [];
      const type: TreeEntry["type"] =
        entry.mode === "120000"
          ? "symlink"
          : entry.mode === "160000" || entry.type === "commit"
            ? "submodule"
            : entry.type === "tree"
              ? "tree"
              : "blob";
      return [
        { path: entry.path, type, sha: entry.sha, ...(entry.size !== undefined ? { size: entry.size } : {}) },
      ];
    });
  }

  async function readBlob(sha: string): Promise<string> {
    if (ctx.cache) return ctx.cache.blob(ctx.fullName, sha, () => fetchBlob(sha));
    return fetchBlob(sha);
  }

  async function fetchBlob(sha: string): Promise<string> {
    const { data } = await ctx.octokit.rest.git.getBlob({ ...ctx.r, file_sha: sha });
    if (typeof data.content !== "string")
      throw new UserError("file-too-large", `blob ${shortSha(sha)} came back without content`);
    return Buffer.from(data.content, data.encoding === "base64" ? "base64" : "utf8").toString("utf8");
  }

  async function createCommit(input: {
    baseTreeSha: string;
    parents: string[];
    files: Record<string, string>;
    message: string;
  }) {
    // Inline content: GitHub creates the blobs, one request instead of one per file.
    const tree = await ctx.octokit.rest.git.createTree({
      ...ctx.r,
      base_tree: input.baseTreeSha,
      tree: Object.entries(input.files).map(([path, content]) => ({
        path,
        mode: "100644" as const,
        type: "blob" as const,
        content,
      })),
    });
    const commit = await ctx.octokit.rest.git.createCommit({
      ...ctx.r,
      message: input.message,
      tree: tree.data.sha,
      parents: input.parents,
    });
    // Once merged, these files are on the base: reading them back costs nothing.
    for (const content of Object.values(input.files)) ctx.cache?.rememberWrittenBlob(ctx.fullName, content);
    return { sha: commit.data.sha, treeSha: tree.data.sha };
  }

  async function createRef(branch: string, sha: string): Promise<"created" | "exists"> {
    try {
      await ctx.octokit.rest.git.createRef({ ...ctx.r, ref: `refs/heads/${branch}`, sha });
      return "created";
    } catch (error) {
      if (status(error) === 422 && /already exists/i.test(message(error))) return "exists";
      throw ruleRefusal(error, branch) ?? error;
    }
  }

  async function updateRef(
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
      const current = await orUndefinedOn404(
        ctx.octokit.rest.git.getRef({ ...ctx.r, ref: `heads/${branch}` }),
      );
      return current?.data.object.sha === sha ? "updated" : "conflict";
    }
  }

  async function replaceRef(branch: string, sha: string, expected: string): Promise<"updated" | "conflict"> {
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
      const current = await orUndefinedOn404(
        ctx.octokit.rest.git.getRef({ ...ctx.r, ref: `heads/${branch}` }),
      );
      return current?.data.object.sha === sha ? "updated" : "conflict";
    }
  }

  async function branchRulesFingerprint(branch: string): Promise<string | undefined> {
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

  /** The commit a full ref (`refs/…`) points at, or undefined when it does not exist. */
  async function refCommit(ref: string): Promise<string | undefined> {
    const response = await orUndefinedOn404(
      ctx.octokit.rest.git.getRef({ ...ctx.r, ref: ref.slice("refs/".length) }),
    );
    return response?.data.object.sha;
  }

  function stateHead(): Promise<string | undefined> {
    return refCommit(STATE_REF);
  }

  async function writeStateCommit(
    parent: string | undefined,
    content: string,
    message: string,
  ): Promise<"written" | "conflict"> {
    // No base tree: the state commits carry the state file alone, unrelated to the branches.
    const tree = await ctx.octokit.rest.git.createTree({
      ...ctx.r,
      tree: [{ path: STATE_FILE, mode: "100644", type: "blob", content }],
    });
    const commit = await ctx.octokit.rest.git.createCommit({
      ...ctx.r,
      message,
      tree: tree.data.sha,
      parents: parent === undefined ? [] : [parent],
    });
    const sha = commit.data.sha;
    try {
      if (parent === undefined) await ctx.octokit.rest.git.createRef({ ...ctx.r, ref: STATE_REF, sha });
      else
        await ctx.octokit.rest.git.updateRef({
          ...ctx.r,
          ref: STATE_REF.slice("refs/".length),
          sha,
          force: false,
        });
      return "written";
    } catch (error) {
      if (status(error) !== 422) throw error;
      // A retried request that had in fact landed leaves the ref at our commit: that is success.
      return (await stateHead()) === sha ? "written" : "conflict";
    }
  }
  return {
    readFile,
    listTree,
    listCommits,
    readBlob,
    defaultBranch,
    getBranch,
    createCommit,
    createRef,
    updateRef,
    replaceRef,
    branchRulesFingerprint,
    stateHead,
    writeStateCommit,
  };
}
