import type { HistoryCommit } from "../core/history/history-entry.js";
import type { DeploymentRecords } from "../core/history/deployments.js";
/**
 * What the app's use cases need from GitHub, for one installation and one config repository.
 * Implemented over Octokit in `src/adapters/github/`; faked in tests (docs/testing.md "Fakes and emulators"). The
 * methods are shaped so that a promotion costs few requests (docs/architecture.md "GitHub conventions"),
 * and grouped into roles that each use case names as it needs them (docs/architecture.md "The GitHub port").
 */
import type { AllowedMergeMethods, MergeMethod } from "../core/pr/merge-method.js";
import type { Permission } from "../core/config/schema.js";
import type { CheckOutput } from "../core/pr/check-run.js";
import type { HealthSource } from "../core/health/health-source.js";

/**
 * Where the holds and floors live: a ref outside refs/heads (no branch list, no PR, no push event
 * Ferry acts on) whose commits each hold one file. Its compare-and-swap makes concurrent updates
 * from several replicas safe, which an issue body cannot (docs/architecture.md "Replicas and state").
 */
export const STATE_REF = "refs/ferry/state";
export const STATE_FILE = "state.json";

export interface BranchInfo {
  sha: string;
  treeSha: string;
  /** The tip's parents, first parent first. */
  parents: string[];
  /** Branch protection is on (then auto-merge is GitHub's native one). */
  protected: boolean;
}

export interface TreeEntry {
  path: string;
  /** `symlink` and `submodule` entries are never read or written (docs/reliability.md row 15). */
  type: "blob" | "symlink" | "tree" | "submodule";
  sha: string;
  /** Bytes, for blobs (the tree listing says it: a file can be judged before it is fetched). */
  size?: number;
}

export interface PullRequestInfo {
  number: number;
  nodeId: string;
  state: "open" | "closed";
  merged: boolean;
  headRef: string;
  headSha: string;
  baseRef: string;
  title: string;
  body: string;
  labels: string[];
  /** Native auto-merge is enabled: GitHub merges it when the requirements are met. */
  autoMerge: boolean;
  /**
   * GitHub's `mergeable` (single-PR reads only): null while GitHub still computes it in the
   * background (https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request).
   */
  mergeable?: boolean | null;
  /** GitHub's `mergeable_state` (single-PR reads only): `clean`, `blocked`, `behind`, `dirty`, `unknown` … */
  mergeableState?: string;
  /** Who opened it (`ferry[bot]` for Ferry's own). */
  author: string;
  /** `owner/repo` of the head branch; another repository for a fork, undefined once a fork is deleted. */
  headRepo?: string;
}

export type ReactionContent = "eyes" | "rocket" | "-1" | "+1" | "confused";
export type ChecksState = "success" | "pending" | "failure";

/** A check run to create: Ferry's check output (`core/pr/check-run.ts`) on a commit. */
export interface CheckRunInput extends CheckOutput {
  name: string;
  headSha: string;
}

export interface IssueInfo {
  number: number;
  title: string;
  body: string;
  state: "open" | "closed";
}

export interface DeploymentHealth {
  /** The config commit the environment last reported. */
  sha: string;
  state: "success" | "failure" | "error" | "in_progress" | "queued" | "pending" | "inactive";
  /** When the latest status was reported. */
  since: Date;
  /** The reconciler's words: sync, health and drift (`core/deployment-status.ts`). */
  description?: string;
}

/** Where `commitHealth` looks: a source other than Deployments, on the newest commits of a branch. */
export interface CommitHealthQuery {
  source: Exclude<HealthSource, { kind: "deployments" }>;
  branch: string;
  commits: number;
}

/** Which repository a port speaks for (lock keys, and telling Ferry's own PRs from a fork's). */
export interface RepoIdentity {
  readonly owner: string;
  readonly repo: string;
}

/** Files of a commit: its recursive tree, blobs by SHA, and one file by path. */
export interface GitHubContents {
  /**
   * File content at a ref (a branch, a commit, or a full ref such as `STATE_REF`), or undefined
   * when absent. One request (the contents API); a full ref outside branches and tags, two (its
   * commit first: the contents API takes only a branch, tag or commit).
   */
  readFile(ref: string, path: string): Promise<string | undefined>;
  /**
   * Every entry of a tree, recursively (or only its own entries with `recursive: false`). A
   * recursive listing GitHub cuts (`truncated: true`, past 100,000 entries or 7 MB) throws
   * UserError `tree-too-large`.
   */
  listTree(treeSha: string, options?: { recursive?: boolean }): Promise<TreeEntry[]>;
  /** Commits of the default branch that touched `path`, newest first, at most `limit` (`/ferry history`). */
  listCommits?(path: string, limit: number): Promise<HistoryCommit[]>;
  readBlob(sha: string): Promise<string>;
}

/** A commit's content: the plan's files over a base tree, or a tree written before. */
export type CommitInput = { parents: string[]; message: string } & (
  { baseTreeSha: string; files: Record<string, string> } | { treeSha: string }
);

/** Branches and commits: read the base, write Ferry's `ferry/<env>` branch by compare-and-swap. */
export interface GitHubBranches {
  defaultBranch(): Promise<string>;
  /** The branch head and whether classic protection is on (one request), or undefined when absent. */
  getBranch(name: string): Promise<BranchInfo | undefined>;
  /**
   * One commit carrying every file (trees with inline content: no separate blob requests), or, given
   * `treeSha`, a commit of a tree already written (one write instead of two).
   */
  createCommit(input: CommitInput): Promise<{ sha: string; treeSha: string }>;
  /**
   * `exists` when the ref is already there (docs/reliability.md row 23). Both writes throw
   * RuleViolationError (core/rule-violation.ts) when a repository ruleset refuses them.
   */
  createRef(branch: string, sha: string): Promise<"created" | "exists">;
  /**
   * Fast-forward only, never forced: `conflict` when the branch moved (docs/reliability.md row 22);
   * `workflow-refused` when the move would change `.github/workflows/*` (brought in from the base)
   * and the app lacks the `workflows` permission.
   */
  updateRef(branch: string, sha: string): Promise<"updated" | "conflict" | "workflow-refused">;
  /**
   * Moves the branch to `sha` even when that is no fast-forward, but only while it still points at
   * `expected` (GraphQL `updateRefs` with `beforeOid` and `force`): `conflict` when it moved.
   * Throws RuleViolationError when a ruleset refuses it (a blocked force push).
   */
  replaceRef?(branch: string, sha: string, expected: string): Promise<"updated" | "conflict">;
  /**
   * What decides a write of `branch` under repository rulesets, as one fingerprint
   * (core/rule-violation.ts `rulesFingerprint`): equal answers mean the rules did not change.
   * Undefined when GitHub does not say (no access).
   */
  branchRulesFingerprint?(branch: string): Promise<string | undefined>;
}

/**
 * Ferry's state ref, `STATE_REF`. Its file is read with `GitHubContents.readFile(STATE_REF or a
 * commit of it, STATE_FILE)`: undefined before the first state write.
 */
export interface GitHubStateRef {
  /** The commit the state ref points at, or undefined before the first state write. */
  stateHead(): Promise<string | undefined>;
  /**
   * A commit holding only the state file, child of `parent`, moved onto the state ref by
   * compare-and-swap (never forced): `conflict` when another writer moved the ref since `parent`
   * was read (or, with no parent, created it first). The caller re-reads and re-applies.
   */
  writeStateCommit(
    parent: string | undefined,
    content: string,
    message: string,
  ): Promise<"written" | "conflict">;
}

/** Pull requests: find, open and update Ferry's PR for an environment. */
export interface GitHubPulls {
  findOpenPull(head: string): Promise<PullRequestInfo | undefined>;
  getPull(number: number): Promise<PullRequestInfo | undefined>;
  createPull(input: { head: string; base: string; title: string; body: string }): Promise<PullRequestInfo>;
  updatePull(
    number: number,
    input: { title?: string; body?: string; state?: "open" | "closed" },
  ): Promise<void>;
  addLabels(number: number, labels: string[]): Promise<void>;
  /**
   * `refused` when GitHub answers 422 because a user or team has no access to the repository
   * (the PR exists all the same).
   */
  requestReviewers(number: number, users: string[], teams: string[]): Promise<void | "refused">;
  /** The PR's reviews (first 100), each with its state (`APPROVED`, `DISMISSED`, …) and commit. */
  listReviews?(number: number): Promise<{ state: string; commitId: string | null; user?: string }[]>;
  /**
   * Every file a PR changes as GitHub lists them (100 a page, 3,000 in all), each renamed one with
   * its previous name: what the PR checks read once for all of them.
   */
  listChangedFiles?(number: number): Promise<{ filename: string; previous_filename?: string }[]>;
}

/** Merging a PR: GitHub's native auto-merge, or Ferry's own merge at the head it validated. */
export interface GitHubMerges {
  /**
   * GitHub's native auto-merge, only while the head is still `expectedHead` (GraphQL
   * `expectedHeadOid`). `clean`: GitHub refuses it because the PR may merge right now;
   * `not-yet`: refused in `unstable` status, which is also what GitHub answers while it still
   * computes mergeability, so worth asking again; `unavailable` when the repo does not allow it
   * or the head moved.
   */
  enableAutoMerge(
    pull: PullRequestInfo,
    expectedHead: string,
    method: MergeMethod,
  ): Promise<"enabled" | "clean" | "not-yet" | "unavailable">;
  /** Turns native auto-merge off (a commit Ferry did not write reached the PR). */
  disableAutoMerge(pull: PullRequestInfo): Promise<void>;
  /**
   * Merges only if the head is still `sha` (docs/reliability.md row 13). `review-required`: GitHub
   * waits for an approving review (or for requested changes to be dismissed).
   */
  merge(
    number: number,
    sha: string,
    method: MergeMethod,
  ): Promise<
    | "merged"
    | "head-moved"
    | "base-moved"
    | "method-refused"
    | "not-mergeable"
    | "queue-required"
    | "review-required"
  >;
  /**
   * Adds the PR to its base's merge queue (GraphQL `enqueuePullRequest`), only while the head is
   * still `expectedHead`; `refused` with GitHub's reason otherwise.
   */
  enqueuePull?(pull: PullRequestInfo, expectedHead: string): Promise<"queued" | { refused: string }>;
  /** The merge methods the repository allows; undefined when its settings cannot be read. */
  allowedMergeMethods(): Promise<AllowedMergeMethods | undefined>;
  /**
   * Whether the repository allows native auto-merge (`allow_auto_merge`, off by default on GitHub,
   * from the same repository read); undefined when its settings cannot be read.
   */
  allowsAutoMerge?(): Promise<boolean | undefined>;
  /**
   * Contexts required on the branch by classic protection and by repository rulesets (two
   * requests), or undefined when neither requires any.
   */
  requiredChecks(branch: string): Promise<string[] | undefined>;
  /**
   * Whether the branch takes PRs only through a merge queue (a ruleset's `merge_queue` rule, one
   * request); absent or false where that cannot be read.
   */
  hasMergeQueue?(branch: string): Promise<boolean>;
  /**
   * Whether a ruleset requires the branch's PRs to be up to date before merging
   * (`strict_required_status_checks_policy`, one request); absent or false where that cannot be read.
   */
  upToDateRequired?(branch: string): Promise<boolean>;
}

/**
 * A check run's whole output, any conclusion GitHub takes for Ferry's (`ferry/diff`): summary and
 * text each within GitHub's 65,535 characters (the adapter cuts what does not fit).
 */
export interface CheckRunResult {
  conclusion: "success" | "failure" | "neutral";
  title: string;
  summary: string;
  text?: string;
}

/** Checks and statuses: read a commit's CI state (here or in an image's source repo), write Ferry's own. */
export interface GitHubChecks {
  /** Combined state of checks and statuses on a commit, restricted to `contexts` when given. */
  checksState(
    sha: string,
    contexts?: string[],
    repo?: { owner: string; repo: string },
  ): Promise<ChecksState | "none">;
  createCheckRun(input: CheckRunInput): Promise<void>;
  /** Creates an `in_progress` check run on `headSha` and returns its id (then `completeCheckRun`). */
  startCheckRun?(name: string, headSha: string): Promise<number>;
  /** Completes a check run `startCheckRun` created. */
  completeCheckRun?(id: number, result: CheckRunResult): Promise<void>;
  /** The commit a git tag points at in another repo (CI gating when an image has no revision label). */
  tagCommit?(repo: { owner: string; repo: string }, tag: string): Promise<string | undefined>;
}

/**
 * Commit statuses Ferry writes (`ferry/window`) and the open PRs it writes them on
 * (docs/config.md "Change windows and freezes").
 */
export interface GitHubStatuses {
  /** POST /repos/{o}/{r}/statuses/{sha}; the description at most 140 characters. */
  postStatus?(
    sha: string,
    input: { context: string; state: "success" | "failure" | "pending"; description: string },
  ): Promise<void>;
  /** Open PRs of the repository, most recently updated first, at most `limit`. */
  listOpenPulls?(limit: number): Promise<PullRequestInfo[]>;
  /** A PR's changed files (renamed ones by both names), at most `limit`; `cut` when there were more. */
  listPullFiles?(number: number, limit: number): Promise<{ files: string[]; cut: boolean }>;
}

/** Comments on issues and PRs, and the reactions that answer (and dedupe) a command. */
export interface GitHubComments {
  comment(issueNumber: number, body: string): Promise<void>;
  /** Adds a reaction as the app; `existed` when the app had already reacted so (dedupes redeliveries). */
  react(commentId: number, content: ReactionContent): Promise<"created" | "existed">;
}

/** Ferry's issues (labelled `ferry`): the dashboard and the broken-config issue. */
export interface GitHubIssues {
  /**
   * The `ferry`-labelled issue with this title (the oldest open one, else the oldest), found
   * whatever the number of labelled issues and PRs and their order.
   */
  findIssue(title: string): Promise<IssueInfo | undefined>;
  /** One issue by number, with who opened it; undefined when absent or a pull request. */
  getIssue?(number: number): Promise<(IssueInfo & { author: string }) | undefined>;
  /** Opens an issue labelled `ferry`; undefined when the repository has issues turned off (410). */
  createIssue(input: { title: string; body: string }): Promise<number | undefined>;
  updateIssue(number: number, input: { body?: string; state?: "open" | "closed" }): Promise<void>;
  pinIssue?(issue: number): Promise<void>;
}

/** Who may run a command: live permission and team membership. */
export interface GitHubAccess {
  permissionOf(login: string): Promise<Permission | "none">;
  isTeamMember(team: string, login: string): Promise<boolean>;
}

/** What the reconciler reported through Deployment statuses. */
export interface GitHubDeployments {
  /**
   * The latest Deployment status the reconciler reported for an environment: the newest
   * Deployment created by one of `reporters`, and its newest status created by one of them
   * (anyone who can write to the repository can post others; they never count).
   */
  deploymentHealth(environment: string, reporters: readonly string[]): Promise<DeploymentHealth | undefined>;
  /**
   * The environment's Deployments, newest first, each with its statuses oldest first: at most
   * `maxDeployments` Deployments and `maxStatuses` statuses in all (`/ferry history`).
   */
  /**
   * The newest health report among the newest `commits` commits of `branch` from `source` (commit
   * statuses or check runs, from the identity the source names only), or undefined when none.
   */
  commitHealth?(query: CommitHealthQuery): Promise<DeploymentHealth | undefined>;
  listDeploymentRecords?(
    environment: string,
    bounds: { maxDeployments: number; maxStatuses: number },
    reporters: readonly string[],
  ): Promise<DeploymentRecords>;
}

/**
 * The ledger of notifications claimed (core/notify/ledger.ts): `claimed` for the one caller of all
 * replicas that records `eventId` first, `seen` for every later one.
 */
export interface GitHubNotifyLedger {
  claimNotification?(eventId: string): Promise<"claimed" | "seen">;
}

/**
 * Every role: what the Octokit adapter implements and the app wiring hands to use cases. A use
 * case declares only the roles it calls (docs/architecture.md "The GitHub port").
 */
export interface GitHubRepoPort
  extends
    RepoIdentity,
    GitHubContents,
    GitHubBranches,
    GitHubStateRef,
    GitHubPulls,
    GitHubMerges,
    GitHubChecks,
    GitHubComments,
    GitHubIssues,
    GitHubAccess,
    GitHubDeployments,
    GitHubStatuses,
    GitHubNotifyLedger {}
