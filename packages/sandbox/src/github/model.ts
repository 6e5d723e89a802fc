/**
 * The emulator's in-memory metadata: everything GitHub keeps outside git (accounts, pull
 * requests, issues, comments, reviews, checks, statuses, deployments, apps, installations).
 * Git objects and refs live in real repositories (git-store.ts).
 */
import type { KeyObject } from "node:crypto";
import type { GitRepo } from "./git-store.js";

export type RepoRole = "admin" | "maintain" | "write" | "triage" | "read";
export const ROLE_ORDER: readonly (RepoRole | "none")[] = [
  "none",
  "read",
  "triage",
  "write",
  "maintain",
  "admin",
];

export function roleAtLeast(role: RepoRole | "none", wanted: RepoRole | "none"): boolean {
  return ROLE_ORDER.indexOf(role) >= ROLE_ORDER.indexOf(wanted);
}

export interface Account {
  id: number;
  nodeId: string;
  login: string;
  type: "User" | "Bot" | "Organization";
  name: string;
  email: string;
  /** Personal token; absent for organizations and app bots. */
  token?: string;
  createdAt: string;
}

export interface Team {
  id: number;
  nodeId: string;
  org: string;
  slug: string;
  name: string;
  members: Map<string, "member" | "maintainer">;
  /** Repository name (lower case) → the role the team's members get on it. */
  repositories: Map<string, RepoRole>;
}

export interface BranchProtection {
  requiredChecks: string[];
  strict: boolean;
  requiredApprovals: number;
  enforceAdmins: boolean;
  /** A push to a PR's head dismisses its approvals (`stale-reviews.ts`); GitHub's default is off. */
  dismissStaleReviews?: boolean;
}

/**
 * A branch ruleset (https://docs.github.com/en/rest/repos/rules#create-a-repository-ruleset).
 * `rules` holds every rule as GitHub shapes it; `requiredChecks`, `strict` and `mergeQueue` are
 * read from it (ruleset-model.ts keeps them in step).
 */
export interface Ruleset {
  id: number;
  name: string;
  enforcement: "active" | "disabled" | "evaluate";
  /** `conditions.ref_name`: full ref names, fnmatch patterns, `~ALL`, `~DEFAULT_BRANCH`. */
  conditions: { include: string[]; exclude: string[] };
  bypassActors: RulesetBypassActor[];
  rules: RulesetRule[];
  requiredChecks: string[];
  /** `strict_required_status_checks_policy`: the head must contain the base's tip. */
  strict: boolean;
  /** A merge queue on these branches, merging with this method. */
  mergeQueue?: { method: "MERGE" | "SQUASH" | "REBASE" };
  createdAt: string;
  updatedAt: string;
}

export interface RulesetRule {
  type: string;
  parameters?: Record<string, unknown>;
}

export interface RulesetBypassActor {
  actorId: number | null;
  actorType: "Integration" | "OrganizationAdmin" | "RepositoryRole" | "Team" | "DeployKey" | "User";
  bypassMode: "always" | "pull_request" | "exempt";
}

export interface Label {
  id: number;
  nodeId: string;
  name: string;
  color: string;
  description: string | null;
  default: boolean;
}

export interface Reaction {
  id: number;
  nodeId: string;
  user: string;
  content: string;
  createdAt: string;
}

export interface PullState {
  headRef: string;
  /**
   * The fork the head branch is in; undefined when it is in the base repository. Its commits are
   * copied into the base as `refs/pull/<n>/head`, as GitHub serves a fork PR's head from the base.
   */
  headRepo?: Repo;
  /** Head SHA, kept current while the head branch moves (frozen once closed). */
  headSha: string;
  baseRef: string;
  merged: boolean;
  mergedAt: string | null;
  mergedBy: string | null;
  mergeCommitSha: string | null;
  draft: boolean;
  maintainerCanModify: boolean;
  requestedReviewers: string[];
  requestedTeams: string[];
  /** The base tip when the PR closed, so counts of closed PRs stay meaningful. */
  baseShaAtClose: string | null;
  autoMerge: {
    enabledBy: string;
    method: "MERGE" | "SQUASH" | "REBASE";
    commitTitle: string | null;
    commitMessage: string | null;
    /** Armed on a merge-queue base after its checks had passed: GitHub never queues it (`enableAutoMerge`). */
    stalled?: boolean;
  } | null;
  /** The merge group's commit while the PR waits in its base's merge queue. */
  queuedGroup?: string;
  /** How many more mergeability-dependent requests see it still being computed (`Repo.mergeabilityLag`). */
  mergeabilityUnknownFor?: number;
}

/** Issues and pull requests share one numbering, as on GitHub. */
export interface Issue {
  id: number;
  nodeId: string;
  number: number;
  title: string;
  body: string | null;
  state: "open" | "closed";
  stateReason: string | null;
  user: string;
  labels: string[];
  assignees: string[];
  locked: boolean;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  closedBy: string | null;
  reactions: Reaction[];
  pull?: PullState;
  /** The PR's own id/node id differ from its issue's on GitHub. */
  pullId?: number;
  pullNodeId?: string;
}

export interface IssueComment {
  id: number;
  nodeId: string;
  issueNumber: number;
  user: string;
  body: string;
  createdAt: string;
  updatedAt: string;
  /** Who acted through an app, when an installation wrote it. */
  appId?: number;
  reactions: Reaction[];
  deleted: boolean;
}

export interface Review {
  id: number;
  nodeId: string;
  pullNumber: number;
  user: string;
  body: string;
  state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "DISMISSED" | "PENDING";
  commitId: string;
  submittedAt: string;
}

export interface CheckSuite {
  id: number;
  nodeId: string;
  appId: number;
  headSha: string;
  headBranch: string | null;
  status: "queued" | "in_progress" | "completed";
  conclusion: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface CheckRun {
  id: number;
  nodeId: string;
  suiteId: number;
  appId: number;
  name: string;
  headSha: string;
  status: "queued" | "in_progress" | "completed" | "waiting" | "requested" | "pending";
  conclusion: string | null;
  startedAt: string | null;
  completedAt: string | null;
  externalId: string | null;
  detailsUrl: string | null;
  output: { title: string | null; summary: string | null; text: string | null; annotations: unknown[] };
}

export interface CommitStatus {
  id: number;
  nodeId: string;
  sha: string;
  state: "error" | "failure" | "pending" | "success";
  context: string;
  description: string | null;
  targetUrl: string | null;
  creator: string;
  createdAt: string;
  updatedAt: string;
}

export interface Deployment {
  id: number;
  nodeId: string;
  sha: string;
  ref: string;
  task: string;
  environment: string;
  description: string | null;
  payload: unknown;
  creator: string;
  productionEnvironment: boolean;
  transientEnvironment: boolean;
  createdAt: string;
  updatedAt: string;
  appId?: number;
}

export interface DeploymentStatus {
  id: number;
  nodeId: string;
  deploymentId: number;
  state: string;
  description: string;
  environment: string;
  targetUrl: string;
  logUrl: string;
  environmentUrl: string;
  creator: string;
  createdAt: string;
  updatedAt: string;
  appId?: number;
}

export interface CiSimulation {
  context: string;
  conclusion: string;
  delayMs: number;
}

export interface Repo {
  id: number;
  nodeId: string;
  owner: string;
  name: string;
  description: string | null;
  private: boolean;
  defaultBranch: string;
  git: GitRepo;
  /** The repository this one is a fork of (`POST /repos/{o}/{r}/forks`); undefined for a source repository. */
  parent?: Repo;
  collaborators: Map<string, RepoRole>;
  allowAutoMerge: boolean;
  deleteBranchOnMerge: boolean;
  allowMergeCommit: boolean;
  allowSquashMerge: boolean;
  allowRebaseMerge: boolean;
  /**
   * GitHub computes a PR's mergeability in a background job after it opens or its head moves
   * (`mergeable: null` until then, https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request).
   * The emulator models that window as a count: this many requests about the PR that depend on
   * mergeability (reading it, `PUT /merge`, `enablePullRequestAutoMerge`) see it still unknown.
   * 0 (the default) computes it at once.
   */
  mergeabilityLag: number;
  /**
   * Custom repository roles by collaborator login: the role's name, reported as `role_name`
   * (https://docs.github.com/en/rest/collaborators/collaborators#get-repository-permissions-for-a-user);
   * the collaborator's entry in `collaborators` is the base role it inherits.
   */
  customRoles: Map<string, string>;
  /** Settings → Issues; off, `POST /issues` answers 410 "Issues are disabled for this repo". */
  hasIssues: boolean;
  /**
   * The most entries a recursive `GET /git/trees` lists before answering `truncated: true`.
   * GitHub's limit is "100,000 entries with a maximum size of 7 MB"
   * (https://docs.github.com/en/rest/git/trees#get-a-tree); the emulator counts entries only.
   */
  treeEntryLimit: number;
  /** Repository rulesets (Settings → Rules), in creation order. */
  rulesets: Ruleset[];
  createdAt: string;
  updatedAt: string;
  pushedAt: string;
  protections: Map<string, BranchProtection>;
  labels: Map<string, Label>;
  issues: Map<number, Issue>;
  nextNumber: number;
  comments: Map<number, IssueComment>;
  reviews: Review[];
  checkSuites: Map<number, CheckSuite>;
  checkRuns: Map<number, CheckRun>;
  statuses: CommitStatus[];
  deployments: Map<number, Deployment>;
  deploymentStatuses: DeploymentStatus[];
  ci: CiSimulation[];
  /** Issue numbers pinned to the repository (GitHub allows three). */
  pinnedIssues: number[];
}

export type Permissions = Record<string, "read" | "write" | "admin">;

export interface App {
  id: number;
  nodeId: string;
  slug: string;
  name: string;
  clientId: string;
  owner: string;
  permissions: Permissions;
  events: string[];
  webhookUrl: string | null;
  webhookSecret: string | null;
  publicKey: KeyObject;
  botLogin: string;
  createdAt: string;
}

export interface Installation {
  id: number;
  appId: number;
  account: string;
  /** undefined: all repositories of the account. */
  repositories: string[] | undefined;
  permissions: Permissions;
  events: string[];
  createdAt: string;
}

export interface InstallationToken {
  token: string;
  installationId: number;
  expiresAt: number;
  permissions: Permissions;
  repositories: string[] | undefined;
}

/** Who is calling. */
export type Actor =
  | { kind: "anonymous" }
  | { kind: "user"; login: string }
  | { kind: "app"; appId: number }
  | {
      kind: "installation";
      installationId: number;
      appId: number;
      permissions: Permissions;
      repositories: string[] | undefined;
      login: string;
    };

export function actorName(actor: Actor): string {
  switch (actor.kind) {
    case "anonymous":
      return "anonymous";
    case "user":
      return actor.login;
    case "app":
      return `app:${actor.appId}`;
    case "installation":
      return actor.login;
  }
}
