import { UserError } from "../core/errors.js";
import type { FileSource, SkippedFile } from "./plan-environment.js";
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
 * (docs/reliability.md row 15).
 */
export function repoFileSource(
  github: GitHubContents,
  treeSha: string,
  maxFileBytes = MAX_ENVIRONMENT_FILE_BYTES,
): FileSource {
  let tree: Promise<Map<string, TreeEntry>> | undefined;
  const skipped = new Map<string, SkippedFile>();
  const fits = (path: string, entry: TreeEntry): boolean => {
    if (entry.size === undefined || entry.size <= maxFileBytes) return true;
    skipped.set(path, { path, reason: `skipped: ${tooLarge(path, entry.size, maxFileBytes)}` });
    return false;
  };
  const entries = (): Promise<Map<string, TreeEntry>> =>
    (tree ??= github.listTree(treeSha).then((list) => new Map(list.map((entry) => [entry.path, entry]))));
  // Keyed by blob sha: identical files (the same overlay in two environments) are fetched once.
  const texts = new Map<string, Promise<string>>();
  return {
    async listFiles(paths) {
      const all = await entries();
      const found = new Set<string>();
      for (const raw of paths) {
        const path = normalize(raw);
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
      const entry = (await entries()).get(path);
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
