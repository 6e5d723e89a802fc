import type { HistoryCommit } from "../../core/history/history-entry.js";
import { UserError } from "../../core/errors.js";
import type { GitHubContents, TreeEntry } from "../../app/github-port.js";
import { shortSha } from "../../core/commit-sha.js";
import { type GitHubRepoContext, orUndefinedOn404, refCommit } from "./github-repo-context.js";

/** The largest file read through the contents API fallback (the state and config files are small). */
const MAX_READ_BYTES = 4 * 1024 * 1024;

/** Files, trees, blobs and commits of the repository (`GitHubContents`), trees and blobs cached by SHA. */
export function contentsOf(ctx: GitHubRepoContext): Required<GitHubContents> {
  return {
    readFile: (ref, path) => readFile(ctx, ref, path),
    listTree: (treeSha, options) => listTree(ctx, treeSha, options),
    listCommits: (path, limit) => listCommits(ctx, path, limit),
    readBlob: (sha) => readBlob(ctx, sha),
  };
}

async function readFile(ctx: GitHubRepoContext, ref: string, path: string): Promise<string | undefined> {
  // The contents API's `ref` is "the name of the commit/branch/tag"
  // (https://docs.github.com/en/rest/repos/contents#get-repository-content): a ref elsewhere,
  // such as the state ref, is read at the commit the refs API gives for it.
  const at = /^refs\/(?!heads\/|tags\/)/.test(ref) ? await refCommit(ctx, ref) : ref;
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
    return readBlob(ctx, sha);
  throw new UserError(
    "file-too-large",
    `${path} is too large to read${size !== undefined ? ` (${size} bytes)` : ""}`,
  );
}

async function listCommits(ctx: GitHubRepoContext, path: string, limit: number): Promise<HistoryCommit[]> {
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

async function listTree(
  ctx: GitHubRepoContext,
  treeSha: string,
  options: { recursive?: boolean } = {},
): Promise<TreeEntry[]> {
  const recursive = options.recursive ?? true;
  const load = () => fetchTree(ctx, treeSha, recursive);
  // One level of a tree is cached apart from the recursive listing of the same SHA.
  if (ctx.cache) return ctx.cache.tree(ctx.fullName, recursive ? treeSha : `${treeSha}:1`, load);
  return load();
}

async function fetchTree(ctx: GitHubRepoContext, treeSha: string, recursive: boolean): Promise<TreeEntry[]> {
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

async function readBlob(ctx: GitHubRepoContext, sha: string): Promise<string> {
  if (ctx.cache) return ctx.cache.blob(ctx.fullName, sha, () => fetchBlob(ctx, sha));
  return fetchBlob(ctx, sha);
}

async function fetchBlob(ctx: GitHubRepoContext, sha: string): Promise<string> {
  const { data } = await ctx.octokit.rest.git.getBlob({ ...ctx.r, file_sha: sha });
  if (typeof data.content !== "string")
    throw new UserError("file-too-large", `blob ${shortSha(sha)} came back without content`);
  return Buffer.from(data.content, data.encoding === "base64" ? "base64" : "utf8").toString("utf8");
}
