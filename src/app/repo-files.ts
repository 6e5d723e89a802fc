import { UserError } from "../core/errors.js";
import type { FileSource } from "./plan-environment.js";
import type { GitHubRepoPort, TreeEntry } from "./github-port.js";

const YAML_FILE = /\.ya?ml$/;

/**
 * The files of one commit, read through the Git Data API: one recursive tree request, then one
 * blob per file actually read. Symlinks and submodules are refused, never followed
 * (docs/reliability.md row 15).
 */
export function repoFileSource(github: GitHubRepoPort, treeSha: string): FileSource {
  let tree: Promise<Map<string, TreeEntry>> | undefined;
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
            found.add(path);
            continue;
          }
        }
        for (const [name, entry] of all) {
          if (!name.startsWith(`${path}/`) || !YAML_FILE.test(name)) continue;
          if (entry.type === "symlink") continue;
          if (entry.type === "blob") found.add(name);
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
      let text = texts.get(entry.sha);
      if (!text) {
        text = github.readBlob(entry.sha);
        texts.set(entry.sha, text);
      }
      return text;
    },
  };
}

function normalize(path: string): string {
  const clean = path.replace(/^\.\/+/, "").replace(/\/+$/, "");
  if (clean.split("/").some((segment) => segment === "..") || clean.startsWith("/") || clean.includes("\0")) {
    throw new UserError("unsafe-path", `path ${JSON.stringify(path)} leaves the repository`);
  }
  return clean;
}
