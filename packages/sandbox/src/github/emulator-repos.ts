/**
 * Repositories of the GitHub emulator and who may do what to them: collaborators, teams,
 * settings, branch protection and the access check every route runs.
 */
import { installationCovers } from "./emulator-accounts.js";
import { join } from "node:path";
import type { GitHubEmulator } from "./emulator.js";
import { GitRepo, ZERO_SHA } from "./git-store.js";
import {
  roleAtLeast,
  type Actor,
  type BranchProtection,
  type Repo,
  type RepoRole,
  type Ruleset,
  type RulesetBypassActor,
  type RulesetRule,
  type Team,
} from "./model.js";
import { conditionCovers } from "./ruleset-conditions.js";
import { newRuleset } from "./ruleset-model.js";
import { ApiError, type RequestContext } from "./router.js";
import * as shape from "./shapes.js";

/** The repository settings a test may change (as on the repo's Settings page). */
export type RepoSettings = Partial<
  Pick<
    Repo,
    | "allowAutoMerge"
    | "deleteBranchOnMerge"
    | "allowMergeCommit"
    | "allowSquashMerge"
    | "allowRebaseMerge"
    | "mergeabilityLag"
    | "hasIssues"
    | "treeEntryLimit"
    | "private"
  >
>;

export interface CreateRepoOptions {
  files?: Record<string, string>;
  defaultBranch?: string;
  private?: boolean;
  description?: string;
  collaborators?: Record<string, RepoRole>;
  allowAutoMerge?: boolean;
  deleteBranchOnMerge?: boolean;
  /** A fork of this repository: its branches (only the default one with `defaultBranchOnly`), not `files`. */
  forkOf?: { parent: Repo; defaultBranchOnly?: boolean };
}

export interface ProtectBranchOptions {
  requiredChecks?: string[];
  requiredApprovals?: number;
  strict?: boolean;
  /** Whether admins are held to the rules too (default true, so protection means what tests say). */
  enforceAdmins?: boolean;
  /** "Dismiss stale pull request approvals when new commits are pushed" (default false, as on GitHub). */
  dismissStaleReviews?: boolean;
}

/** A team of `org`; `repositories` grants its members a role on the org's repositories, as team access does. */
export function createTeam(
  emu: GitHubEmulator,
  org: string,
  slug: string,
  members: string[],
  options: { maintainers?: string[]; repositories?: Record<string, RepoRole> } = {},
): { id: number; slug: string } {
  emu.account(org);
  const id = emu.id();
  const repositories = new Map(
    Object.entries(options.repositories ?? {}).map(([name, role]) => [name.toLowerCase(), role]),
  );
  const team: Team = {
    id,
    nodeId: shape.nodeIdFor("T", id),
    org,
    slug,
    name: slug,
    members: new Map(),
    repositories,
  };
  for (const member of members) team.members.set(member.toLowerCase(), "member");
  for (const member of options.maintainers ?? []) team.members.set(member.toLowerCase(), "maintainer");
  emu.teams.set(`${org}/${slug}`.toLowerCase(), team);
  return { id, slug };
}

export async function createRepo(
  emu: GitHubEmulator,
  owner: string,
  name: string,
  options: CreateRepoOptions = {},
): Promise<{ id: number; fullName: string; defaultBranch: string; headSha: string }> {
  const account = emu.account(owner);
  const key = `${account.login}/${name}`.toLowerCase();
  if (emu.repos.has(key)) throw new Error(`repository ${key} exists`);
  const defaultBranch = options.defaultBranch ?? "main";
  const git = new GitRepo(join(emu.dataDir, "repos", account.login, `${name}.git`));
  await git.init(defaultBranch);
  const id = emu.id();
  const now = emu.now();
  const repo: Repo = {
    id,
    nodeId: shape.nodeIdFor("R", id),
    owner: account.login,
    name,
    description: options.description ?? null,
    private: options.private ?? false,
    defaultBranch,
    git,
    collaborators: new Map(
      Object.entries(options.collaborators ?? {}).map(([login, role]) => [emu.account(login).login, role]),
    ),
    allowAutoMerge: options.allowAutoMerge ?? false,
    deleteBranchOnMerge: options.deleteBranchOnMerge ?? false,
    allowMergeCommit: true,
    allowSquashMerge: true,
    allowRebaseMerge: true,
    mergeabilityLag: 0,
    hasIssues: true,
    treeEntryLimit: 100_000,
    rulesets: [],
    customRoles: new Map(),
    createdAt: now,
    updatedAt: now,
    pushedAt: now,
    protections: new Map(),
    labels: new Map(),
    issues: new Map(),
    nextNumber: 1,
    comments: new Map(),
    reviews: [],
    checkSuites: new Map(),
    checkRuns: new Map(),
    statuses: [],
    deployments: new Map(),
    deploymentStatuses: [],
    ci: [],
    pinnedIssues: [],
  };
  if (options.forkOf) {
    const { parent, defaultBranchOnly } = options.forkOf;
    repo.parent = parent;
    emu.repos.set(key, repo);
    await git.fetchFrom(
      parent.git,
      defaultBranchOnly
        ? `+refs/heads/${parent.defaultBranch}:refs/heads/${parent.defaultBranch}`
        : "+refs/heads/*:refs/heads/*",
    );
    const headSha = (await git.readRef(`refs/heads/${defaultBranch}`)) ?? ZERO_SHA;
    return { id, fullName: `${account.login}/${name}`, defaultBranch, headSha };
  }
  emu.repos.set(key, repo);
  const tree = await git.writeTree(
    undefined,
    Object.entries(options.files ?? {}).map(([path, content]) => ({ path, content })),
  );
  const ident = emu.identityOf(account.login);
  const sha = await git.commitTree({ tree, parents: [], message: "Initial commit\n", author: ident });
  await git.compareAndSwapRef(`refs/heads/${defaultBranch}`, sha, ZERO_SHA);
  return { id, fullName: `${account.login}/${name}`, defaultBranch, headSha: sha };
}

export function setCollaborator(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  login: string,
  role: RepoRole | "none",
): void {
  const r = emu.repo(owner, repo);
  r.customRoles.delete(emu.account(login).login);
  if (role === "none") r.collaborators.delete(emu.account(login).login);
  else r.collaborators.set(emu.account(login).login, role);
}

/** Gives `login` an organisation's custom repository role `name` that inherits `base`. */
export function setCustomRole(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  login: string,
  name: string,
  base: RepoRole,
): void {
  setCollaborator(emu, owner, repo, login, base);
  emu.repo(owner, repo).customRoles.set(emu.account(login).login, name);
}

export function setRepoSettings(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  settings: RepoSettings,
): void {
  Object.assign(emu.repo(owner, repo), settings);
}

export function protectBranch(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  branch: string,
  options: ProtectBranchOptions = {},
): void {
  const protection: BranchProtection = {
    requiredChecks: options.requiredChecks ?? [],
    strict: options.strict ?? false,
    requiredApprovals: options.requiredApprovals ?? 0,
    enforceAdmins: options.enforceAdmins ?? true,
    ...(options.dismissStaleReviews ? { dismissStaleReviews: true } : {}),
  };
  emu.repo(owner, repo).protections.set(branch, protection);
}

export interface RulesetOptions {
  name?: string;
  /** Branch names (default: the default branch); `include`/`exclude` take patterns instead. */
  branches?: string[];
  /** `conditions.ref_name.include`: `refs/heads/…` names or fnmatch patterns, `~ALL`, `~DEFAULT_BRANCH`. */
  include?: string[];
  exclude?: string[];
  requiredChecks?: string[];
  /** `strict_required_status_checks_policy` of the required checks. */
  strict?: boolean;
  mergeQueue?: { method?: "MERGE" | "SQUASH" | "REBASE" };
  /** Further rules as GitHub shapes them (`{ type: "creation" }`, …). */
  rules?: RulesetRule[];
  bypassActors?: RulesetBypassActor[];
  enforcement?: Ruleset["enforcement"];
}

/** Adds a branch ruleset (Settings → Rules → Rulesets) to a repository. */
export function addRuleset(
  emu: GitHubEmulator,
  owner: string,
  repo: string,
  options: RulesetOptions,
): { id: number } {
  const r = emu.repo(owner, repo);
  const id = emu.id();
  const checks = options.requiredChecks ?? [];
  const rules: RulesetRule[] = [
    ...(options.rules ?? []),
    ...(checks.length > 0
      ? [
          {
            type: "required_status_checks",
            parameters: {
              strict_required_status_checks_policy: options.strict ?? false,
              required_status_checks: checks.map((context) => ({ context })),
            },
          },
        ]
      : []),
    ...(options.mergeQueue
      ? [
          {
            type: "merge_queue",
            parameters: {
              check_response_timeout_minutes: 60,
              grouping_strategy: "ALLGREEN",
              max_entries_to_build: 5,
              max_entries_to_merge: 5,
              merge_method: options.mergeQueue.method ?? "SQUASH",
              min_entries_to_merge: 1,
              min_entries_to_merge_wait_minutes: 5,
            },
          },
        ]
      : []),
  ];
  const include =
    options.include ??
    (options.branches ?? ["~DEFAULT_BRANCH"]).map((b) => (b.startsWith("~") ? b : `refs/heads/${b}`));
  const ruleset = newRuleset(
    id,
    {
      name: options.name ?? `ruleset-${id}`,
      enforcement: options.enforcement ?? "active",
      conditions: { include, exclude: options.exclude ?? [] },
      bypassActors: options.bypassActors ?? [],
      rules,
    },
    new Date().toISOString(),
  );
  r.rulesets.push(ruleset);
  return { id };
}

/** The active rulesets that apply to a branch. */
export function rulesetsFor(repo: Repo, branch: string): Ruleset[] {
  return repo.rulesets.filter(
    (ruleset) =>
      ruleset.enforcement === "active" &&
      conditionCovers(ruleset.conditions, `refs/heads/${branch}`, repo.defaultBranch),
  );
}

/** Every check a branch requires: classic branch protection's and its rulesets', once each. */
export function requiredChecksFor(repo: Repo, branch: string): string[] {
  return [
    ...new Set([
      ...(repo.protections.get(branch)?.requiredChecks ?? []),
      ...rulesetsFor(repo, branch).flatMap((ruleset) => ruleset.requiredChecks),
    ]),
  ];
}

/** A user's role on a repository, as `GET /collaborators/{user}/permission` reports it. */
export function roleOf(emu: GitHubEmulator, repo: Repo, login: string): RepoRole | "none" {
  const account = emu.findAccount(login);
  if (!account) return "none";
  if (account.login === repo.owner) return "admin";
  // The highest of the direct role and every team grant, like GitHub's effective permission.
  const roles: (RepoRole | "none")[] = [repo.collaborators.get(account.login) ?? "none"];
  for (const team of emu.teams.values()) {
    if (team.org.toLowerCase() !== repo.owner.toLowerCase() || !team.members.has(account.login.toLowerCase()))
      continue;
    roles.push(team.repositories.get(repo.name.toLowerCase()) ?? "none");
  }
  const best = roles.reduce((a, b) => (roleAtLeast(a, b) ? a : b));
  if (best !== "none") return best;
  return repo.private ? "none" : "read";
}

/**
 * Finds the repository of the request and checks the actor may do emu to it: `category` is
 * the GitHub App permission (contents, pull_requests, issues, checks, statuses, deployments,
 * administration, metadata), `userRole` the least repository role a user needs.
 */
export function authorizeRepo(
  emu: GitHubEmulator,
  ctx: RequestContext,
  category: string | string[],
  level: "read" | "write",
  userRole: RepoRole,
): Repo {
  const repo = emu.findRepo(ctx.params.owner ?? "", ctx.params.repo ?? "");
  if (!repo) throw new ApiError(404, "Not Found");
  authorize(emu, ctx.actor, repo, category, level, userRole);
  return repo;
}

export function authorize(
  emu: GitHubEmulator,
  actor: Actor,
  repo: Repo,
  category: string | string[],
  level: "read" | "write",
  userRole: RepoRole,
): void {
  switch (actor.kind) {
    case "anonymous":
      if (repo.private) throw new ApiError(404, "Not Found");
      if (level === "write") throw new ApiError(401, "Requires authentication");
      return;
    case "app":
      throw new ApiError(403, "Resource not accessible by integration");
    case "user": {
      const role = roleOf(emu, repo, actor.login);
      if (role === "none") throw new ApiError(404, "Not Found");
      if (!roleAtLeast(role, userRole)) {
        throw new ApiError(
          403,
          level === "write" ? "Resource not accessible by personal access token" : "Not Found",
        );
      }
      return;
    }
    case "installation": {
      const inst = emu.installations.get(actor.installationId);
      const covered =
        inst !== undefined &&
        installationCovers(emu, inst, repo) &&
        (actor.repositories === undefined || actor.repositories.includes(repo.name.toLowerCase()));
      if (!covered) {
        if (repo.private) throw new ApiError(404, "Not Found");
        if (level === "write") throw new ApiError(403, "Resource not accessible by integration");
        return;
      }
      const categories = typeof category === "string" ? [category] : category;
      if (categories.includes("metadata")) return;
      const ok = categories.some((name) => {
        const granted = actor.permissions[name];
        return granted !== undefined && (level === "read" || granted === "write" || granted === "admin");
      });
      if (!ok) throw new ApiError(403, "Resource not accessible by integration");
      return;
    }
  }
}
