import type { AllowedMergeMethods, MergeMethod } from "../../core/pr/merge-method.js";
import type { HistoryCommit } from "../../core/history/history.js";
import type {
  DeploymentRecord,
  DeploymentRecords,
  DeploymentStatusRecord,
} from "../../core/history/deployments.js";
import type { Octokit } from "@octokit/rest";
import type { Permission } from "../../core/config/schema.js";
import { UserError } from "../../core/errors.js";
import { fitBody } from "../../core/pr/body-limit.js";
import type {
  BranchInfo,
  CheckRunInput,
  ChecksState,
  DeploymentHealth,
  GitHubRepoPort,
  IssueInfo,
  PullRequestInfo,
  ReactionContent,
  TreeEntry,
} from "../../app/github-port.js";
import { STATE_FILE, STATE_REF } from "../../app/github-port.js";
import type { AccessCache } from "./access-cache.js";
import type { GitContentCache } from "./git-content-cache.js";

/** The part of an Octokit (Probot's or @octokit/rest's) this adapter uses. */
export type OctokitLike = Pick<Octokit, "rest" | "graphql" | "paginate">;

/** Merge method for Ferry's PRs: squash keeps the base history one commit per promotion. */
const FERRY_ISSUE_LABEL = "ferry";
/** Pages of 100 `ferry`-labelled issues and PRs read when looking for one by title (3,000 items). */
const MAX_ISSUE_PAGES = 30;
/** The largest file read through the contents API fallback (the state and config files are small). */
const MAX_READ_BYTES = 4 * 1024 * 1024;

function status(error: unknown): number | undefined {
  const value = (error as { status?: unknown }).status;
  return typeof value === "number" ? value : undefined;
}

function message(error: unknown): string {
  const data = (error as { response?: { data?: { message?: unknown } } }).response?.data;
  return typeof data?.message === "string"
    ? data.message
    : error instanceof Error
      ? error.message
      : String(error);
}

async function orUndefinedOn404<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (error) {
    if (status(error) === 404) return undefined;
    throw error;
  }
}

/** Pull request data from the REST shape. */
function toPull(data: {
  number: number;
  node_id: string;
  state: string;
  merged?: boolean | null;
  merged_at?: string | null;
  head: { ref: string; sha: string; repo?: { full_name: string } | null };
  base: { ref: string };
  title: string;
  body?: string | null;
  labels?: ({ name?: string } | string)[];
  auto_merge?: unknown;
  user?: { login: string } | null;
  mergeable?: boolean | null;
  mergeable_state?: string;
}): PullRequestInfo {
  return {
    author: data.user?.login ?? "",
    ...(data.head.repo ? { headRepo: data.head.repo.full_name } : {}),
    number: data.number,
    nodeId: data.node_id,
    state: data.state === "open" ? "open" : "closed",
    merged: data.merged === true || Boolean(data.merged_at),
    headRef: data.head.ref,
    headSha: data.head.sha,
    baseRef: data.base.ref,
    title: data.title,
    body: data.body ?? "",
    labels: (data.labels ?? []).map((label) => (typeof label === "string" ? label : (label.name ?? ""))),
    autoMerge: data.auto_merge !== undefined && data.auto_merge !== null,
    ...(data.mergeable !== undefined ? { mergeable: data.mergeable } : {}),
    ...(data.mergeable_state !== undefined ? { mergeableState: data.mergeable_state } : {}),
  };
}

/**
 * Every role of the GitHub port (`GitHubRepoPort`) over Octokit REST (and one GraphQL mutation for native auto-merge). Every write
 * is an upsert or a compare-and-swap; nothing is forced (docs/reliability.md rows 22–24).
 */
export class GitHubRepoAdapter implements GitHubRepoPort {
  constructor(
    private readonly octokit: OctokitLike,
    readonly owner: string,
    readonly repo: string,
    /** Process-wide cache of trees and blobs by SHA (content addresses never go stale). */
    private readonly cache?: GitContentCache,
    /** Process-wide cache of low permission answers (a flood of refused commands costs one lookup). */
    private readonly access?: AccessCache,
  ) {}

  private get fullName(): string {
    return `${this.owner}/${this.repo}`;
  }

  private get r() {
    return { owner: this.owner, repo: this.repo };
  }

  /** One `GET /repos/{o}/{r}` per adapter: the default branch and the merge settings share it. */
  private repository?: Promise<{
    default_branch: string;
    allow_squash_merge?: boolean;
    allow_merge_commit?: boolean;
    allow_rebase_merge?: boolean;
  }>;

  private readRepository() {
    this.repository ??= this.octokit.rest.repos.get(this.r).then((response) => response.data);
    const pending = this.repository;
    // A failed read is not kept: the next call asks again.
    pending.catch(() => {
      if (this.repository === pending) this.repository = undefined;
    });
    return pending;
  }

  async defaultBranch(): Promise<string> {
    return (await this.readRepository()).default_branch;
  }

  async allowedMergeMethods(): Promise<AllowedMergeMethods | undefined> {
    const data = await this.readRepository();
    const { allow_squash_merge: squash, allow_merge_commit: merge, allow_rebase_merge: rebase } = data;
    // GitHub includes these settings only for tokens that may see them.
    if (squash === undefined || merge === undefined || rebase === undefined) return undefined;
    return { squash, merge, rebase };
  }

  async getBranch(name: string): Promise<BranchInfo | undefined> {
    const response = await orUndefinedOn404(this.octokit.rest.repos.getBranch({ ...this.r, branch: name }));
    if (!response) return undefined;
    const { data } = response;
    return { sha: data.commit.sha, treeSha: data.commit.commit.tree.sha, protected: data.protected };
  }

  async readFile(ref: string, path: string): Promise<string | undefined> {
    const response = await orUndefinedOn404(this.octokit.rest.repos.getContent({ ...this.r, path, ref }));
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
      return this.readBlob(sha);
    throw new UserError(
      "file-too-large",
      `${path} is too large to read${size !== undefined ? ` (${size} bytes)` : ""}`,
    );
  }

  async listCommits(path: string, limit: number): Promise<HistoryCommit[]> {
    const commits: HistoryCommit[] = [];
    for (let page = 1; commits.length < limit; page++) {
      const per_page = Math.min(100, limit);
      const { data } = await this.octokit.rest.repos.listCommits({ ...this.r, path, per_page, page });
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

  async listTree(treeSha: string, options: { recursive?: boolean } = {}): Promise<TreeEntry[]> {
    const recursive = options.recursive ?? true;
    const load = () => this.fetchTree(treeSha, recursive);
    // One level of a tree is cached apart from the recursive listing of the same SHA.
    if (this.cache) return this.cache.tree(this.fullName, recursive ? treeSha : `${treeSha}:1`, load);
    return load();
  }

  private async fetchTree(treeSha: string, recursive: boolean): Promise<TreeEntry[]> {
    const { data } = await this.octokit.rest.git.getTree({
      ...this.r,
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

  async readBlob(sha: string): Promise<string> {
    if (this.cache) return this.cache.blob(this.fullName, sha, () => this.fetchBlob(sha));
    return this.fetchBlob(sha);
  }

  private async fetchBlob(sha: string): Promise<string> {
    const { data } = await this.octokit.rest.git.getBlob({ ...this.r, file_sha: sha });
    if (typeof data.content !== "string")
      throw new UserError("file-too-large", `blob ${sha.slice(0, 7)} came back without content`);
    return Buffer.from(data.content, data.encoding === "base64" ? "base64" : "utf8").toString("utf8");
  }

  async createCommit(input: {
    baseTreeSha: string;
    parents: string[];
    files: Record<string, string>;
    message: string;
  }) {
    // Inline content: GitHub creates the blobs, one request instead of one per file.
    const tree = await this.octokit.rest.git.createTree({
      ...this.r,
      base_tree: input.baseTreeSha,
      tree: Object.entries(input.files).map(([path, content]) => ({
        path,
        mode: "100644" as const,
        type: "blob" as const,
        content,
      })),
    });
    const commit = await this.octokit.rest.git.createCommit({
      ...this.r,
      message: input.message,
      tree: tree.data.sha,
      parents: input.parents,
    });
    // Once merged, these files are on the base: reading them back costs nothing.
    for (const content of Object.values(input.files)) this.cache?.rememberWrittenBlob(this.fullName, content);
    return { sha: commit.data.sha, treeSha: tree.data.sha };
  }

  async createRef(branch: string, sha: string): Promise<"created" | "exists"> {
    try {
      await this.octokit.rest.git.createRef({ ...this.r, ref: `refs/heads/${branch}`, sha });
      return "created";
    } catch (error) {
      if (status(error) === 422 && /already exists/i.test(message(error))) return "exists";
      throw error;
    }
  }

  async updateRef(branch: string, sha: string): Promise<"updated" | "conflict" | "workflow-refused"> {
    try {
      await this.octokit.rest.git.updateRef({ ...this.r, ref: `heads/${branch}`, sha, force: false });
      return "updated";
    } catch (error) {
      // "refusing to allow a GitHub App to create or update workflow … without `workflows`
      // permission" (https://github.com/chdsbd/kodiak/issues/853).
      if (/without `?workflows`? permission/i.test(message(error))) return "workflow-refused";
      if (status(error) !== 422) throw error;
      // "Reference already equals our commit" is success (docs/reliability.md row 22).
      const current = await orUndefinedOn404(
        this.octokit.rest.git.getRef({ ...this.r, ref: `heads/${branch}` }),
      );
      return current?.data.object.sha === sha ? "updated" : "conflict";
    }
  }

  async stateHead(): Promise<string | undefined> {
    const response = await orUndefinedOn404(
      this.octokit.rest.git.getRef({ ...this.r, ref: STATE_REF.slice("refs/".length) }),
    );
    return response?.data.object.sha;
  }

  async writeStateCommit(
    parent: string | undefined,
    content: string,
    message: string,
  ): Promise<"written" | "conflict"> {
    // No base tree: the state commits carry the state file alone, unrelated to the branches.
    const tree = await this.octokit.rest.git.createTree({
      ...this.r,
      tree: [{ path: STATE_FILE, mode: "100644", type: "blob", content }],
    });
    const commit = await this.octokit.rest.git.createCommit({
      ...this.r,
      message,
      tree: tree.data.sha,
      parents: parent === undefined ? [] : [parent],
    });
    const sha = commit.data.sha;
    try {
      if (parent === undefined) await this.octokit.rest.git.createRef({ ...this.r, ref: STATE_REF, sha });
      else
        await this.octokit.rest.git.updateRef({
          ...this.r,
          ref: STATE_REF.slice("refs/".length),
          sha,
          force: false,
        });
      return "written";
    } catch (error) {
      if (status(error) !== 422) throw error;
      // A retried request that had in fact landed leaves the ref at our commit: that is success.
      return (await this.stateHead()) === sha ? "written" : "conflict";
    }
  }

  async findOpenPull(head: string): Promise<PullRequestInfo | undefined> {
    const { data } = await this.octokit.rest.pulls.list({
      ...this.r,
      head: `${this.owner}:${head}`,
      state: "open",
      per_page: 5,
    });
    const pull = data.find((candidate) => candidate.head.ref === head);
    return pull ? toPull(pull) : undefined;
  }

  async getPull(number: number): Promise<PullRequestInfo | undefined> {
    const response = await orUndefinedOn404(this.octokit.rest.pulls.get({ ...this.r, pull_number: number }));
    return response ? toPull(response.data) : undefined;
  }

  async createPull(input: {
    head: string;
    base: string;
    title: string;
    body: string;
  }): Promise<PullRequestInfo> {
    const { data } = await this.octokit.rest.pulls.create({
      ...this.r,
      ...input,
      maintainer_can_modify: false,
    });
    return toPull(data);
  }

  async updatePull(
    number: number,
    input: { title?: string; body?: string; state?: "open" | "closed" },
  ): Promise<void> {
    await this.octokit.rest.pulls.update({ ...this.r, pull_number: number, ...input });
  }

  async addLabels(number: number, labels: string[]): Promise<void> {
    await this.octokit.rest.issues.addLabels({ ...this.r, issue_number: number, labels });
  }

  async requestReviewers(number: number, users: string[], teams: string[]): Promise<void | "refused"> {
    try {
      await this.octokit.rest.pulls.requestReviewers({
        ...this.r,
        pull_number: number,
        reviewers: users,
        team_reviewers: teams.map((team) => team.split("/").pop()!),
      });
    } catch (error) {
      // "Reviews may only be requested from collaborators. One or more of the users or teams you
      // specified is not a collaborator of the … repository." (422, after the PR was created:
      // https://github.com/projectcontour/contour/pull/5998).
      if (status(error) === 422 && /only be requested from collaborators/i.test(message(error)))
        return "refused";
      throw error;
    }
  }

  async enableAutoMerge(
    pull: PullRequestInfo,
    expectedHead: string,
    method: MergeMethod,
  ): Promise<"enabled" | "clean" | "not-yet" | "unavailable"> {
    try {
      // expectedHeadOid: GitHub refuses when the head is no longer the commit Ferry wrote.
      await this.octokit.graphql(
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

  async enqueuePull(pull: PullRequestInfo, expectedHead: string): Promise<"queued" | { refused: string }> {
    try {
      // https://docs.github.com/en/graphql/reference/mutations#enqueuepullrequest
      await this.octokit.graphql(
        `mutation($id: ID!, $head: GitObjectID) { enqueuePullRequest(input: { pullRequestId: $id, expectedHeadOid: $head }) { clientMutationId } }`,
        { id: pull.nodeId, head: expectedHead },
      );
      return "queued";
    } catch (error) {
      return { refused: message(error) };
    }
  }

  async disableAutoMerge(pull: PullRequestInfo): Promise<void> {
    await this.octokit.graphql(
      `mutation($id: ID!) { disablePullRequestAutoMerge(input: { pullRequestId: $id }) { clientMutationId } }`,
      { id: pull.nodeId },
    );
  }

  async merge(
    number: number,
    sha: string,
    method: MergeMethod,
  ): Promise<"merged" | "head-moved" | "base-moved" | "method-refused" | "not-mergeable" | "queue-required"> {
    try {
      await this.octokit.rest.pulls.merge({
        ...this.r,
        pull_number: number,
        sha,
        merge_method: method,
      });
      return "merged";
    } catch (error) {
      const code = status(error);
      if (code === 409) return "head-moved";
      if (code === 405 && /base branch was modified/i.test(message(error))) return "base-moved";
      // "Squash merges are not allowed on this repository." (a repository setting, never transient)
      if (code === 405 && /not allowed on this repository/i.test(message(error))) return "method-refused";
      // "Changes must be made through the merge queue": the base has a merge queue.
      if (code === 405 && /merge queue/i.test(message(error))) return "queue-required";
      if (code === 405 || code === 422) return "not-mergeable";
      throw error;
    }
  }

  async requiredChecks(branch: string): Promise<string[] | undefined> {
    // Classic branch protection: the branch endpoint shows the required contexts without needing
    // the administration permission. Repository rulesets require checks too
    // (`required_status_checks` rules, https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch,
    // readable with metadata access); GitHub enforces both.
    const [response, rules] = await Promise.all([
      orUndefinedOn404(this.octokit.rest.repos.getBranch({ ...this.r, branch })),
      this.branchRules(branch),
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

  /** The ruleset rules that apply to a branch (none when the endpoint is unknown, e.g. an older GHES). */
  private async branchRules(
    branch: string,
  ): Promise<{ type: string; parameters?: { required_status_checks?: { context: string }[] } }[]> {
    const response = await orUndefinedOn404(
      this.octokit.rest.repos.getBranchRules({ ...this.r, branch, per_page: 100 }),
    );
    return (response?.data ?? []) as {
      type: string;
      parameters?: { required_status_checks?: { context: string }[] };
    }[];
  }

  async checksState(
    sha: string,
    contexts?: string[],
    repo?: { owner: string; repo: string },
  ): Promise<ChecksState | "none"> {
    const target = repo ?? this.r;
    const [statuses, runs] = await Promise.all([
      this.octokit.rest.repos.getCombinedStatusForRef({ ...target, ref: sha, per_page: 100 }),
      this.octokit.rest.checks.listForRef({ ...target, ref: sha, per_page: 100 }),
    ]);
    const results = new Map<string, ChecksState>();
    for (const item of statuses.data.statuses) {
      if (!results.has(item.context))
        results.set(
          item.context,
          item.state === "success" ? "success" : item.state === "pending" ? "pending" : "failure",
        );
    }
    for (const run of runs.data.check_runs) {
      const state: ChecksState =
        run.status !== "completed"
          ? "pending"
          : run.conclusion === "success" || run.conclusion === "neutral" || run.conclusion === "skipped"
            ? "success"
            : "failure";
      const previous = results.get(run.name);
      if (!previous || previous === "success") results.set(run.name, state);
    }
    const relevant =
      contexts && contexts.length > 0
        ? contexts.map((context) => results.get(context) ?? "pending")
        : [...results.values()];
    if (relevant.length === 0) return "none";
    if (relevant.includes("failure")) return "failure";
    if (relevant.includes("pending")) return "pending";
    return "success";
  }

  async comment(issueNumber: number, body: string): Promise<void> {
    // A `/ferry status` answer for a big config can pass GitHub's body limit: cut it rather than lose it.
    const fitted = fitBody(body, "", "The dashboard issue and `ferry plan` show the rest.") ?? body;
    await this.octokit.rest.issues.createComment({ ...this.r, issue_number: issueNumber, body: fitted });
  }

  async react(commentId: number, content: ReactionContent): Promise<"created" | "existed"> {
    // GitHub answers 200 when this app already reacted so, 201 when it is new: an atomic dedupe key.
    const response = await this.octokit.rest.reactions.createForIssueComment({
      ...this.r,
      comment_id: commentId,
      content,
    });
    return (response.status as number) === 200 ? "existed" : "created";
  }

  async permissionOf(login: string): Promise<Permission | "none"> {
    if (!this.access) return this.livePermissionOf(login);
    return this.access.get(
      `permission:${this.fullName}:${login.toLowerCase()}`,
      () => this.livePermissionOf(login),
      (permission) => ["none", "read", "triage"].includes(permission),
    );
  }

  private async livePermissionOf(login: string): Promise<Permission | "none"> {
    const response = await orUndefinedOn404(
      this.octokit.rest.repos.getCollaboratorPermissionLevel({ ...this.r, username: login }),
    );
    if (!response) return "none";
    const data = response.data as {
      role_name?: string;
      permission: string;
      user?: {
        permissions?: Partial<Record<"admin" | "maintain" | "push" | "triage" | "pull", boolean>>;
      } | null;
    };
    const base = (["read", "triage", "write", "maintain", "admin"] as const).find(
      (name) => name === data.role_name,
    );
    if (base) return base;
    // A custom role (`role_name` is its own name): decide on the base role it inherits, the
    // highest grant in `user.permissions`; `permission` alone reports Maintain as write
    // (https://docs.github.com/en/rest/collaborators/collaborators#get-repository-permissions-for-a-user).
    const grants = data.user?.permissions;
    if (grants) {
      if (grants.admin) return "admin";
      if (grants.maintain) return "maintain";
      if (grants.push) return "write";
      if (grants.triage) return "triage";
      if (grants.pull) return "read";
    }
    const permission = data.permission;
    return (
      (["read", "write", "admin"] as const).find((name) => name === permission) ??
      (permission === "pull" ? "read" : permission === "push" ? "write" : "none")
    );
  }

  async isTeamMember(team: string, login: string): Promise<boolean> {
    const [org, slug] = team.includes("/") ? (team.split("/") as [string, string]) : [this.owner, team];
    if (!this.access) return this.liveTeamMembership(org, slug, login);
    return this.access.get(
      `team:${org}/${slug}:${login.toLowerCase()}`,
      () => this.liveTeamMembership(org, slug, login),
      (member) => !member,
    );
  }

  private async liveTeamMembership(org: string, slug: string, login: string): Promise<boolean> {
    const response = await orUndefinedOn404(
      this.octokit.rest.teams.getMembershipForUserInOrg({ org, team_slug: slug, username: login }),
    );
    return response?.data.state === "active";
  }

  async findIssue(title: string): Promise<IssueInfo | undefined> {
    // Closed ones too: a dashboard someone closed still holds the holds and floors, and is reopened
    // rather than replaced by an empty one (which would silently lift every hold). Ferry's PRs carry
    // the label too, so every page is read: the one page of 100 newest items used to miss the
    // dashboard after ~100 PRs and a duplicate was created. Bounded (docs/reliability.md).
    const matches: { number: number; title: string; body?: string | null; state: string }[] = [];
    let pages = 0;
    for await (const { data } of this.octokit.paginate.iterator(this.octokit.rest.issues.listForRepo, {
      ...this.r,
      labels: FERRY_ISSUE_LABEL,
      state: "all",
      per_page: 100,
    })) {
      for (const candidate of data)
        if (!candidate.pull_request && candidate.title === title) matches.push(candidate);
      if (++pages >= MAX_ISSUE_PAGES) break;
    }
    // The oldest open one: replicas that raced to create a dashboard all settle on the same issue.
    const byNumber = matches.sort((a, b) => a.number - b.number);
    const issue = byNumber.find((candidate) => candidate.state === "open") ?? byNumber[0];
    return issue
      ? {
          number: issue.number,
          title: issue.title,
          body: issue.body ?? "",
          state: issue.state === "open" ? "open" : "closed",
        }
      : undefined;
  }

  async getIssue(number: number): Promise<(IssueInfo & { author: string }) | undefined> {
    let response;
    try {
      response = await this.octokit.rest.issues.get({ ...this.r, issue_number: number });
    } catch (error) {
      // 404, or 410 when the issue was deleted or issues were turned off: the same as absent.
      if (status(error) === 404 || status(error) === 410) return undefined;
      throw error;
    }
    if (response.data.pull_request) return undefined;
    const { data } = response;
    return {
      number: data.number,
      title: data.title,
      body: data.body ?? "",
      state: data.state === "open" ? "open" : "closed",
      author: data.user?.login ?? "",
    };
  }

  async createIssue(input: { title: string; body: string }): Promise<number | undefined> {
    try {
      const { data } = await this.octokit.rest.issues.create({
        ...this.r,
        ...input,
        labels: [FERRY_ISSUE_LABEL],
      });
      return data.number;
    } catch (error) {
      // 410 "Issues are disabled for this repo" (https://github.com/ossf/allstar/issues/64).
      if (status(error) === 410) return undefined;
      throw error;
    }
  }

  async updateIssue(number: number, input: { body?: string; state?: "open" | "closed" }): Promise<void> {
    await this.octokit.rest.issues.update({ ...this.r, issue_number: number, ...input });
  }

  async pinIssue(number: number): Promise<void> {
    const { data } = await this.octokit.rest.issues.get({ ...this.r, issue_number: number });
    await this.octokit.graphql(
      `mutation($id: ID!) { pinIssue(input: { issueId: $id }) { clientMutationId } }`,
      { id: data.node_id },
    );
  }

  async createCheckRun(input: CheckRunInput): Promise<void> {
    await this.octokit.rest.checks.create({
      ...this.r,
      name: input.name,
      head_sha: input.headSha,
      status: "completed",
      conclusion: input.conclusion,
      output: { title: input.title, summary: input.summary, annotations: input.annotations },
    });
  }

  async deploymentHealth(environment: string): Promise<DeploymentHealth | undefined> {
    const { data } = await this.octokit.rest.repos.listDeployments({ ...this.r, environment, per_page: 1 });
    const deployment = data[0];
    if (!deployment) return undefined;
    const statuses = await this.octokit.rest.repos.listDeploymentStatuses({
      ...this.r,
      deployment_id: deployment.id,
      per_page: 1,
    });
    const latest = statuses.data[0];
    if (!latest) return undefined;
    const health: DeploymentHealth = {
      sha: deployment.sha,
      state: latest.state as DeploymentHealth["state"],
      since: new Date(latest.created_at),
    };
    if (latest.description) health.description = latest.description;
    return health;
  }

  async listDeploymentRecords(
    environment: string,
    bounds: { maxDeployments: number; maxStatuses: number },
  ): Promise<DeploymentRecords> {
    // One more than the bound: whether older Deployments exist that were not read.
    const { data } = await this.octokit.rest.repos.listDeployments({
      ...this.r,
      environment,
      per_page: Math.min(100, bounds.maxDeployments + 1),
    });
    let stopped = data.length > bounds.maxDeployments;
    let statusesRead = 0;
    const deployments: DeploymentRecord[] = [];
    for (const deployment of data.slice(0, bounds.maxDeployments)) {
      const budget = bounds.maxStatuses - statusesRead;
      if (budget <= 0) {
        stopped = true;
        break;
      }
      const statuses = await this.octokit.rest.repos.listDeploymentStatuses({
        ...this.r,
        deployment_id: deployment.id,
        per_page: Math.min(100, budget),
      });
      statusesRead += statuses.data.length;
      if (statuses.data.length >= budget) stopped = true;
      deployments.push({
        sha: deployment.sha,
        // GitHub lists them newest first.
        statuses: statuses.data
          .map((status) => ({
            state: status.state as DeploymentStatusRecord["state"],
            description: status.description ?? "",
            at: new Date(status.created_at),
          }))
          .reverse(),
      });
    }
    return { environment, deployments, statusesRead, stopped };
  }

  async tagCommit(repo: { owner: string; repo: string }, tag: string): Promise<string | undefined> {
    const ref = await orUndefinedOn404(this.octokit.rest.git.getRef({ ...repo, ref: `tags/${tag}` }));
    if (!ref) return undefined;
    if (ref.data.object.type !== "tag") return ref.data.object.sha;
    const annotated = await this.octokit.rest.git.getTag({ ...repo, tag_sha: ref.data.object.sha });
    return annotated.data.object.sha;
  }
}
