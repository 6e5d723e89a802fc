import { isUserError, UserError } from "../core/errors.js";
import type { FileSource, SkippedFile } from "./plan-inputs.js";
import type { GitHubContents, TreeEntry } from "./github-port.js";

const YAML_FILE = /\.ya?ml$/;

/**
 * The largest file read under an environment's paths. A bigger one is skipped, judged by the size
 * the tree listing gives before anything is fetched or parsed, so that one generated file never
 * stops the rest of the repository (docs/reliability.md).
 */
export const MAX_ENVIRONMENT_FILE_BYTES = 4 * 1024 * 1024;

function tooLarge(path: string, size: number, max: number): string {
  const mib = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MiB`;
  return `${path} is ${mib(size)}, over the ${mib(max)} limit for an environment file`;
}

/**
 * The files of one commit, read through the Git Data API: one recursive tree request, then one
 * blob per file actually read. Symlinks and submodules are refused, never followed
 * (docs/reliability.md row 15). When GitHub cuts the recursive listing of a big repository
 * (`truncated: true`), only the environments' own folders are listed: the path is walked one level
 * at a time and the folder listed recursively; a folder that is itself too big is an error that
 * names the limit and the folder.
 */
export function repoFileSource(
  github: GitHubContents,
  treeSha: string,
  maxFileBytes = MAX_ENVIRONMENT_FILE_BYTES,
): FileSource {
  let tree: Promise<Map<string, TreeEntry> | "truncated"> | undefined;
  const skipped = new Map<string, SkippedFile>();
  const fits = (path: string, entry: TreeEntry): boolean => {
    if (entry.size === undefined || entry.size <= maxFileBytes) return true;
    skipped.set(path, { path, reason: `skipped: ${tooLarge(path, entry.size, maxFileBytes)}` });
    return false;
  };
  const whole = (): Promise<Map<string, TreeEntry> | "truncated"> =>
    (tree ??= github.listTree(treeSha).then(
      (list) => new Map(list.map((entry) => [entry.path, entry])),
      (error: unknown) => {
        if (isUserError(error) && error.code === "tree-too-large") return "truncated" as const;
        throw error;
      },
    ));
  // The cut-listing fallback: one level per tree SHA, and each folder's recursive listing.
  const levels = new Map<string, Promise<TreeEntry[]>>();
  const level = (sha: string): Promise<TreeEntry[]> => {
    let listing = levels.get(sha);
    if (!listing) {
      listing = github.listTree(sha, { recursive: false });
      levels.set(sha, listing);
    }
    return listing;
  };
  /** The entry at `path`, walking down from the root one level at a time. */
  const walk = async (path: string): Promise<TreeEntry | undefined> => {
    if (path === "") return { path: "", type: "tree", sha: treeSha };
    let current: TreeEntry = { path: "", type: "tree", sha: treeSha };
    for (const segment of path.split("/")) {
      if (current.type !== "tree") return undefined;
      const found = (await level(current.sha)).find((entry) => entry.path === segment);
      if (!found) return undefined;
      current = { ...found, path: current.path === "" ? segment : `${current.path}/${segment}` };
    }
    return current;
  };
  /** The entry at `path`, and every entry under it when it is a folder, with paths from the root. */
  const scoped = async (path: string): Promise<Map<string, TreeEntry>> => {
    const all = await whole();
    if (all !== "truncated") return all;
    const entry = await walk(path);
    const found = new Map<string, TreeEntry>();
    if (!entry) return found;
    found.set(path, entry);
    if (entry.type !== "tree") return found;
    let below: TreeEntry[];
    try {
      below = await github.listTree(entry.sha);
    } catch (error) {
      if (isUserError(error) && error.code === "tree-too-large")
        throw new UserError(
          "tree-too-large",
          `${path} has more entries than GitHub lists in one request (100,000 entries or 7 MB); narrow the environment's paths`,
        );
      throw error;
    }
    for (const child of below)
      found.set(`${path}/${child.path}`, { ...child, path: `${path}/${child.path}` });
    return found;
  };
  const lookup = async (path: string): Promise<TreeEntry | undefined> => {
    const all = await whole();
    return all === "truncated" ? walk(path) : all.get(path);
  };
  // Keyed by blob sha: identical files (the same overlay in two environments) are fetched once.
  const texts = new Map<string, Promise<string>>();
  return {
    async listFiles(paths) {
      const found = new Set<string>();
      for (const raw of paths) {
        const path = normalize(raw);
        const all = await scoped(path);
        const exact = all.get(path);
        if (exact) {
          if (exact.type !== "blob" && exact.type !== "tree")
            throw new UserError("unsafe-path", `${path} is a ${exact.type}; Ferry never follows links`);
          if (exact.type === "blob") {
            if (fits(path, exact)) found.add(path);
            continue;
          }
        }
        for (const [name, entry] of all) {
          if (!name.startsWith(`${path}/`) || !YAML_FILE.test(name)) continue;
          if (entry.type === "symlink") continue;
          if (entry.type === "blob" && fits(name, entry)) found.add(name);
        }
      }
      return [...found].sort();
    },
    async readFile(raw) {
      const path = normalize(raw);
      const entry = await lookup(path);
      if (!entry) throw new UserError("file-not-found", `${path} does not exist`);
      if (entry.type !== "blob")
        throw new UserError("unsafe-path", `${path} is a ${entry.type}; Ferry never follows links`);
      if (entry.size !== undefined && entry.size > maxFileBytes)
        throw new UserError("file-too-large", tooLarge(path, entry.size, maxFileBytes));
      let text = texts.get(entry.sha);
      if (!text) {
        text = github.readBlob(entry.sha);
        texts.set(entry.sha, text);
      }
      return text;
    },
    skipped: () => [...skipped.values()],
  };
}

function normalize(path: string): string {
  const clean = path.replace(/^\.\/+/, "").replace(/\/+$/, "");
  if (clean.split("/").some((segment) => segment === "..") || clean.startsWith("/") || clean.includes("\0")) {
    throw new UserError("unsafe-path", `path ${JSON.stringify(path)} leaves the repository`);
  }
  return clean;
}
