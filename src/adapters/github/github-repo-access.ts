import type { Permission } from "../../core/config/schema.js";
import type { GitHubAccess } from "../../app/github-port.js";
import { type GitHubRepoContext, orUndefinedOn404 } from "./github-repo-context.js";

/**
 * Who may run a command: a person's permission on the repository and membership of a team, the
 * low answers cached process-wide (`GitHubAccess`).
 */
export function accessOf(ctx: GitHubRepoContext): Required<GitHubAccess> {
  return {
    permissionOf: (login) => permissionOf(ctx, login),
    isTeamMember: (team, login) => isTeamMember(ctx, team, login),
  };
}

async function permissionOf(ctx: GitHubRepoContext, login: string): Promise<Permission | "none"> {
  if (!ctx.access) return livePermissionOf(ctx, login);
  return ctx.access.get(
    `permission:${ctx.fullName}:${login.toLowerCase()}`,
    () => livePermissionOf(ctx, login),
    (permission) => ["none", "read", "triage"].includes(permission),
  );
}

async function livePermissionOf(ctx: GitHubRepoContext, login: string): Promise<Permission | "none"> {
  const response = await orUndefinedOn404(
    ctx.octokit.rest.repos.getCollaboratorPermissionLevel({ ...ctx.r, username: login }),
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

async function isTeamMember(ctx: GitHubRepoContext, team: string, login: string): Promise<boolean> {
  const [org, slug] = team.includes("/") ? (team.split("/") as [string, string]) : [ctx.owner, team];
  if (!ctx.access) return liveTeamMembership(ctx, org, slug, login);
  return ctx.access.get(
    `team:${org}/${slug}:${login.toLowerCase()}`,
    () => liveTeamMembership(ctx, org, slug, login),
    (member) => !member,
  );
}

async function liveTeamMembership(
  ctx: GitHubRepoContext,
  org: string,
  slug: string,
  login: string,
): Promise<boolean> {
  const response = await orUndefinedOn404(
    ctx.octokit.rest.teams.getMembershipForUserInOrg({ org, team_slug: slug, username: login }),
  );
  return response?.data.state === "active";
}
