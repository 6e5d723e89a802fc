/** Apps, installations, users, teams and repository permissions. */
import { installationCovers, installedRepos, issueInstallationToken } from "./emulator-accounts.js";
import { authorizeRepo, roleOf } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import type { Actor, Installation, Permissions } from "./model.js";
import { ApiError, paginate, type RequestContext } from "./router.js";
import * as shape from "./shapes.js";

function requireApp(actor: Actor): number {
  if (actor.kind !== "app") {
    throw new ApiError(401, "A JSON web token could not be decoded");
  }
  return actor.appId;
}

function ownInstallation(
  emu: GitHubEmulator,
  ctx: RequestContext,
  installation: Installation | undefined,
): Installation {
  const appId = requireApp(ctx.actor);
  if (!installation || installation.appId !== appId) throw new ApiError(404, "Not Found");
  return installation;
}

export function registerAppRoutes(emu: GitHubEmulator): void {
  const r = emu.router;
  const c = () => emu.shapes;

  r.add("GET", "/app", (ctx) => ({ body: shape.integration(c(), emu.appById(requireApp(ctx.actor))) }));

  r.add("GET", "/app/installations", (ctx) => {
    const appId = requireApp(ctx.actor);
    const app = emu.appById(appId);
    const list = [...emu.installations.values()].filter((i) => i.appId === appId);
    return paginate(
      ctx,
      list.map((i) => shape.installation(c(), i, app)),
    );
  });

  r.add("GET", "/app/installations/:id", (ctx) => {
    const inst = ownInstallation(emu, ctx, emu.installations.get(Number(ctx.params.id)));
    return { body: shape.installation(c(), inst, emu.appById(inst.appId)) };
  });

  r.add("POST", "/app/installations/:id/access_tokens", (ctx) => {
    const inst = ownInstallation(emu, ctx, emu.installations.get(Number(ctx.params.id)));
    const names = Array.isArray(ctx.body.repositories) ? (ctx.body.repositories as string[]) : undefined;
    const ids = Array.isArray(ctx.body.repository_ids) ? (ctx.body.repository_ids as number[]) : undefined;
    let repositories = names;
    if (ids)
      repositories = installedRepos(emu, inst)
        .filter((repo) => ids.includes(repo.id))
        .map((repo) => repo.name);
    if (repositories) {
      for (const name of repositories) {
        const repo = emu.findRepo(inst.account, name);
        if (!repo || !installationCovers(emu, inst, repo))
          throw new ApiError(
            422,
            "There is at least one repository that does not exist or is not accessible to the parent installation.",
          );
      }
    }
    const token = issueInstallationToken(emu, inst, {
      ...(repositories ? { repositories } : {}),
      ...(ctx.body.permissions ? { permissions: ctx.body.permissions as Permissions } : {}),
    });
    const body: Record<string, unknown> = {
      token: token.token,
      expires_at: new Date(token.expiresAt).toISOString().replace(/\.\d{3}Z$/, "Z"),
      permissions: token.permissions,
      repository_selection: token.repositories ? "selected" : "all",
    };
    if (token.repositories) {
      body.repositories = installedRepos(emu, inst)
        .filter((repo) => token.repositories!.includes(repo.name.toLowerCase()))
        .map((repo) => shape.repository(c(), repo));
    }
    return { status: 201, body };
  });

  const installationOf = (ctx: RequestContext, account: string, repoName?: string) => {
    const appId = requireApp(ctx.actor);
    for (const inst of emu.installations.values()) {
      if (inst.appId !== appId || inst.account.toLowerCase() !== account.toLowerCase()) continue;
      if (repoName !== undefined) {
        const repo = emu.findRepo(account, repoName);
        if (!repo || !installationCovers(emu, inst, repo)) continue;
      }
      return { body: shape.installation(c(), inst, emu.appById(appId)) };
    }
    throw new ApiError(404, "Not Found");
  };
  r.add("GET", "/repos/:owner/:repo/installation", (ctx) =>
    installationOf(ctx, ctx.params.owner!, ctx.params.repo!),
  );
  r.add("GET", "/orgs/:org/installation", (ctx) => installationOf(ctx, ctx.params.org!));
  r.add("GET", "/users/:user/installation", (ctx) => installationOf(ctx, ctx.params.user!));

  r.add("GET", "/installation/repositories", (ctx) => {
    if (ctx.actor.kind !== "installation")
      throw new ApiError(403, "This endpoint requires an installation token");
    const actor = ctx.actor;
    const inst = emu.installations.get(actor.installationId)!;
    const repos = installedRepos(emu, inst).filter(
      (repo) => actor.repositories === undefined || actor.repositories.includes(repo.name.toLowerCase()),
    );
    return paginate(
      ctx,
      repos.map((repo) => shape.repository(c(), repo)),
      (page) => ({
        total_count: repos.length,
        repository_selection: inst.repositories ? "selected" : "all",
        repositories: page,
      }),
    );
  });

  r.add("GET", "/users/:user", (ctx) => {
    const account = emu.findAccount(ctx.params.user!);
    if (!account) throw new ApiError(404, "Not Found");
    return { body: shape.publicUser(c(), account.login) };
  });

  r.add("GET", "/user", (ctx) => {
    if (ctx.actor.kind === "anonymous") throw new ApiError(401, "Requires authentication");
    if (ctx.actor.kind !== "user") throw new ApiError(403, "Resource not accessible by integration");
    return { body: shape.publicUser(c(), ctx.actor.login, { private: true }) };
  });

  r.add("GET", "/rate_limit", (ctx) => {
    const reset = Math.ceil(Date.now() / 1000 / 3600) * 3600;
    const limit = ctx.actor.kind === "anonymous" ? 60 : 5000;
    const core = { limit, used: 0, remaining: limit, reset };
    return {
      body: {
        resources: { core, graphql: core, search: { limit: 30, used: 0, remaining: 30, reset } },
        rate: core,
      },
    };
  });

  r.add("GET", "/repos/:owner/:repo/collaborators/:user/permission", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "metadata", "read", "read");
    const account = emu.findAccount(ctx.params.user!);
    if (!account) throw new ApiError(404, "Not Found");
    const role = roleOf(emu, repo, account.login);
    // `permission` is the legacy name (maintain → write, triage → read); `role_name` is exact.
    const legacy = role === "maintain" ? "write" : role === "triage" ? "read" : role;
    // A custom role is named as such; `permission` and `user.permissions` show its base role.
    const roleName = repo.customRoles.get(account.login) ?? role;
    return {
      body: {
        permission: legacy,
        role_name: roleName,
        user: {
          ...shape.simpleUser(c(), account.login),
          permissions: {
            admin: role === "admin",
            maintain: ["admin", "maintain"].includes(role),
            push: ["admin", "maintain", "write"].includes(role),
            triage: ["admin", "maintain", "write", "triage"].includes(role),
            pull: role !== "none",
          },
          role_name: roleName,
        },
      },
    };
  });

  r.add("GET", "/repos/:owner/:repo/collaborators", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "metadata", "read", "write");
    const logins = [repo.owner, ...repo.collaborators.keys()].filter(
      (login, i, all) => all.indexOf(login) === i && emu.account(login).type !== "Organization",
    );
    return paginate(
      ctx,
      logins.map((login) => ({ ...shape.simpleUser(c(), login), role_name: roleOf(emu, repo, login) })),
    );
  });

  r.add("GET", "/orgs/:org/teams/:slug/memberships/:user", (ctx) => {
    const team = emu.teams.get(`${ctx.params.org}/${ctx.params.slug}`.toLowerCase());
    if (ctx.actor.kind === "anonymous") throw new ApiError(401, "Requires authentication");
    if (ctx.actor.kind === "installation") {
      const inst = emu.installations.get(ctx.actor.installationId);
      if (!inst || inst.account.toLowerCase() !== ctx.params.org!.toLowerCase())
        throw new ApiError(404, "Not Found");
      if (!ctx.actor.permissions.members) throw new ApiError(403, "Resource not accessible by integration");
    }
    if (!team) throw new ApiError(404, "Not Found");
    const role = team.members.get(ctx.params.user!.toLowerCase());
    if (!role) throw new ApiError(404, "Not Found");
    return {
      body: {
        url: `${emu.apiUrl}/teams/${team.id}/memberships/${ctx.params.user}`,
        role,
        state: "active",
      },
    };
  });

  r.add("GET", "/orgs/:org/teams/:slug", (ctx) => {
    const team = emu.teams.get(`${ctx.params.org}/${ctx.params.slug}`.toLowerCase());
    if (!team || ctx.actor.kind === "anonymous") throw new ApiError(404, "Not Found");
    const org = emu.account(team.org);
    return {
      body: {
        ...shape.team(c(), team),
        members_count: team.members.size,
        repos_count: team.repositories.size,
        created_at: org.createdAt,
        updated_at: org.createdAt,
        organization: shape.teamOrganization(c(), team.org),
      },
    };
  });
}
