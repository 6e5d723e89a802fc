import type { Octokit } from "@octokit/rest";
import type { RepoIdentity } from "../../app/github-port.js";
import type { AccessCache } from "./access-cache.js";
import type { GitContentCache } from "./git-content-cache.js";

/** The part of an Octokit (Probot's or @octokit/rest's) this adapter uses. */
export type OctokitLike = Pick<Octokit, "rest" | "graphql" | "paginate">;

/** What the adapter reads of `GET /repos/{o}/{r}`. */
export interface RepositorySettings {
  default_branch: string;
  /** The repository's GraphQL node id (`updateRefs` names the repository by it). */
  node_id?: string;
  allow_squash_merge?: boolean;
  allow_merge_commit?: boolean;
  allow_rebase_merge?: boolean;
  allow_auto_merge?: boolean;
}

/**
 * What every role of the GitHub adapter shares: one installation's Octokit, one repository, the
 * process-wide caches and the repository read. Each role's requests live in their own module
 * (`github-repo-*.ts`); `createGitHubRepo` (`github-repo.ts`) assembles them.
 */
export interface GitHubRepoContext extends RepoIdentity {
  readonly octokit: OctokitLike;
  /** `owner/repo`: the caches' key. */
  readonly fullName: string;
  /** `{ owner, repo }`, spread into every request's parameters. */
  readonly r: { owner: string; repo: string };
  /** Process-wide cache of trees and blobs by SHA (content addresses never go stale). */
  readonly cache?: GitContentCache;
  /** Process-wide cache of low permission answers (a flood of refused commands costs one lookup). */
  readonly access?: AccessCache;
  /** One `GET /repos/{o}/{r}` per adapter: the default branch and the merge settings share it. */
  readRepository(): Promise<RepositorySettings>;
}

export function githubRepoContext(
  octokit: OctokitLike,
  owner: string,
  repo: string,
  cache?: GitContentCache,
  access?: AccessCache,
): GitHubRepoContext {
  let repository: Promise<RepositorySettings> | undefined;
  return {
    octokit,
    owner,
    repo,
    fullName: `${owner}/${repo}`,
    get r() {
      return { owner, repo };
    },
    cache,
    access,
    readRepository() {
      repository ??= octokit.rest.repos.get({ owner, repo }).then((response) => response.data);
      const pending = repository;
      // A failed read is not kept: the next call asks again.
      pending.catch(() => {
        if (repository === pending) repository = undefined;
      });
      return pending;
    },
  };
}

export function status(error: unknown): number | undefined {
  const value = (error as { status?: unknown }).status;
  return typeof value === "number" ? value : undefined;
}

/** GitHub's own words for a refusal: REST's `message`, or GraphQL's `errors[].message` without Octokit's wrapping. */
export function message(error: unknown): string {
  const data = (error as { response?: { data?: { message?: unknown } } }).response?.data;
  if (typeof data?.message === "string") return data.message;
  const graphql = (error as { errors?: unknown }).errors;
  const messages = Array.isArray(graphql)
    ? graphql
        .map((entry) => (entry as { message?: unknown }).message)
        .filter((text) => typeof text === "string")
    : [];
  if (messages.length > 0) return messages.join("; ");
  return error instanceof Error ? error.message : String(error);
}

export async function orUndefinedOn404<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (error) {
    if (status(error) === 404) return undefined;
    throw error;
  }
}

/** The commit a full ref (`refs/…`) points at, or undefined when it does not exist. */
export async function refCommit(ctx: GitHubRepoContext, ref: string): Promise<string | undefined> {
  const response = await orUndefinedOn404(
    ctx.octokit.rest.git.getRef({ ...ctx.r, ref: ref.slice("refs/".length) }),
  );
  return response?.data.object.sha;
}
