/**
 * A commit's files for the `ferry/diff` render (docs/diff-check.md "Rendering safely"): its
 * recursive tree through the Git Data API, judged by the sizes the listing gives before anything
 * is fetched, then its blobs (from the content cache when seen before). Symlinks and submodules are
 * never written (a link out of the repository is not there to follow); `.github/` is left out.
 * A snapshot over a limit is refused with the limit's name (`diff-limit`), nothing fetched.
 */
import { createHash } from "node:crypto";
import { UserError } from "../core/errors.js";
import type { GitHubContents } from "./github-port.js";

export interface SnapshotLimits {
  /** Files written at most. */
  maxFiles: number;
  /** Bytes of all files together. */
  maxBytes: number;
}

export const DEFAULT_SNAPSHOT_LIMITS: SnapshotLimits = { maxFiles: 5_000, maxBytes: 16 * 1024 * 1024 };

export interface Snapshot {
  /** Repo path → text. */
  files: ReadonlyMap<string, string>;
  /** Paths of the links left out (never followed). */
  links: string[];
  /** A hash of every path and blob SHA written: the same files render the same (the cache key). */
  key: string;
}

const mib = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;

/** The entries a snapshot of `commitSha` would hold, and its key: one tree request, no blob yet. */
export async function listSnapshot(
  github: GitHubContents,
  commitSha: string,
  limits: SnapshotLimits = DEFAULT_SNAPSHOT_LIMITS,
): Promise<{ blobs: { path: string; sha: string }[]; links: string[]; key: string }> {
  const entries = await github.listTree(commitSha).catch((error: unknown) => {
    if (error instanceof UserError && error.code === "tree-too-large")
      throw new UserError("diff-limit", `the repository tree is too large to list in one request`);
    throw error;
  });
  const blobs: { path: string; sha: string }[] = [];
  const links: string[] = [];
  let bytes = 0;
  for (const entry of entries) {
    if (entry.path === ".github" || entry.path.startsWith(".github/")) continue;
    if (entry.type === "symlink") links.push(entry.path);
    if (entry.type !== "blob") continue;
    bytes += entry.size ?? 0;
    blobs.push({ path: entry.path, sha: entry.sha });
  }
  if (blobs.length > limits.maxFiles)
    throw new UserError(
      "diff-limit",
      `the repository has ${blobs.length} files, over the ${limits.maxFiles}-file limit of a diff render`,
    );
  if (bytes > limits.maxBytes)
    throw new UserError(
      "diff-limit",
      `the repository's files are ${mib(bytes)}, over the ${mib(limits.maxBytes)} limit of a diff render`,
    );
  blobs.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const hash = createHash("sha256");
  for (const blob of blobs) hash.update(`${blob.path}\0${blob.sha}\n`);
  return { blobs, links: links.sort(), key: hash.digest("hex") };
}

/** Fetches the listed blobs (at most a few at a time). */
export async function readSnapshot(
  github: GitHubContents,
  listed: { blobs: { path: string; sha: string }[]; links: string[]; key: string },
): Promise<Snapshot> {
  const files = new Map<string, string>();
  const queue = [...listed.blobs];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift())
      files.set(next.path, await github.readBlob(next.sha));
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return { files, links: listed.links, key: listed.key };
}
