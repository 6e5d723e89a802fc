/**
 * Forks, as GitHub has them (https://docs.github.com/en/rest/repos/forks): `POST
 * /repos/{owner}/{repo}/forks` copies the branches into `{login}/{name}` (202, the new repository;
 * the same fork again when the user already has one), `GET …/forks` lists them. A fork of a
 * private repository stays private and is made only by someone who can read it; an installation
 * token cannot fork ("Resource not accessible by integration"). A PR from a fork names its head as
 * `owner:branch` (routes-pulls.ts); its commits are served by the base repository.
 */
import { createRepo, authorizeRepo } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import type { Repo } from "./model.js";
import { ApiError, validationFailed } from "./router.js";
import * as shape from "./shapes.js";

/** `login`'s fork of `base` (in its network: a fork of a fork counts), if any. */
export function forkOwnedBy(emu: GitHubEmulator, base: Repo, login: string): Repo | undefined {
  for (const repo of emu.repos.values()) {
    if (repo.owner.toLowerCase() !== login.toLowerCase()) continue;
    for (let up = repo.parent; up; up = up.parent) if (up === base) return repo;
  }
  return undefined;
}

/** The top of `repo`'s network (GitHub's `source`). */
export function sourceOf(repo: Repo): Repo {
  let top = repo;
  while (top.parent) top = top.parent;
  return top;
}

/** Forks `base` for `login`: the existing fork, or a new one named `name` (`name-1`… when taken). */
export async function forkRepo(
  emu: GitHubEmulator,
  base: Repo,
  login: string,
  options: { name?: string; defaultBranchOnly?: boolean } = {},
): Promise<Repo> {
  const existing = forkOwnedBy(emu, base, login);
  if (existing) return existing;
  const wanted = options.name ?? base.name;
  let name = wanted;
  for (let n = 1; emu.findRepo(login, name); n++) name = `${wanted}-${n}`;
  await createRepo(emu, login, name, {
    private: base.private,
    defaultBranch: base.defaultBranch,
    ...(base.description !== null ? { description: base.description } : {}),
    forkOf: { parent: base, ...(options.defaultBranchOnly ? { defaultBranchOnly: true } : {}) },
  });
  return emu.findRepo(login, name)!;
}

/** A repository's shape with `parent` and `source`, as `GET /repos/{o}/{r}` gives them for a fork. */
export function repositoryWithNetwork(emu: GitHubEmulator, repo: Repo): Record<string, unknown> {
  const body: Record<string, unknown> = shape.repository(emu.shapes, repo);
  if (repo.parent) {
    body.parent = shape.repository(emu.shapes, repo.parent);
    body.source = shape.repository(emu.shapes, sourceOf(repo));
  }
  return body;
}

export function registerForkRoutes(emu: GitHubEmulator): void {
  emu.router.add("POST", "/repos/:owner/:repo/forks", async (ctx) => {
    const base = authorizeRepo(emu, ctx, "contents", "read", "read");
    if (ctx.actor.kind !== "user") throw new ApiError(403, "Resource not accessible by integration");
    const login = emu.actingLogin(ctx.actor);
    const { name, organization } = ctx.body;
    if (name !== undefined && (typeof name !== "string" || !/^[A-Za-z0-9._-]{1,100}$/.test(name)))
      throw validationFailed("Validation Failed", [
        { resource: "Repository", field: "name", code: "invalid" },
      ]);
    if (organization !== undefined)
      throw validationFailed("Validation Failed", [
        { resource: "Repository", field: "organization", code: "invalid" },
      ]);
    const fork = await forkRepo(emu, base, login, {
      ...(typeof name === "string" ? { name } : {}),
      defaultBranchOnly: ctx.body.default_branch_only === true,
    });
    return { status: 202, body: repositoryWithNetwork(emu, fork) };
  });

  emu.router.add("GET", "/repos/:owner/:repo/forks", (ctx) => {
    const base = authorizeRepo(emu, ctx, "metadata", "read", "read");
    const forks = [...emu.repos.values()].filter((repo) => repo.parent === base);
    return { body: forks.map((fork) => shape.repository(emu.shapes, fork)) };
  });
}
