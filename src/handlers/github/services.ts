import type { AppDeps } from "../../app/app-deps.js";
import type { Installation, InstallationRepository } from "../../app/sync-installation.js";
import type { WorkQueue } from "../../app/work-queue.js";
import type { OctokitLike } from "../../adapters/github/github-repo.js";
import type { CommandFloodGuard } from "./command-flood-guard.js";

/** What the webhook and hint handlers get from the app wiring (`src/probot-app/`); no Probot types here. */
export interface HandlerServices {
  /** Use-case dependencies for one repository, over an installation-authenticated Octokit. */
  depsFor(octokit: OctokitLike, owner: string, repo: string): AppDeps;
  /** Repositories of the installation the event came from (to find config repos). */
  installationRepos(octokit: OctokitLike): Promise<InstallationRepository[]>;
  queue: WorkQueue;
  /** Per person and repository limit on comment commands (shared by every event of this process). */
  commandGuard: CommandFloodGuard;
}

/** The bits of a Probot context a handler reads. */
export interface HandlerEvent<P> {
  id: string;
  name: string;
  payload: P;
  octokit: OctokitLike;
}

export interface RepositoryPayload {
  repository: { name: string; full_name: string; default_branch?: string; owner: { login: string } };
  installation?: { id: number };
  sender?: { login: string; type: string };
}

export const repoOf = (payload: RepositoryPayload) => ({
  owner: payload.repository.owner.login,
  repo: payload.repository.name,
});

/** The installation an event's Octokit is authenticated as, as the installation sync needs it. */
export function installationOf(
  services: HandlerServices,
  octokit: OctokitLike,
  installationId: number | undefined,
): Installation {
  return {
    id: installationId,
    repositories: () => services.installationRepos(octokit),
    depsFor: (owner, repo) => services.depsFor(octokit, owner, repo),
  };
}
