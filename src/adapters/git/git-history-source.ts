import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { HistorySource } from "../../app/environment-history.js";
import type { FileSource } from "../../app/plan-inputs.js";
import { UserError } from "../../core/errors.js";
import type { HistoryCommit } from "../../core/history/history-entry.js";
import { shortSha } from "../../core/commit-sha.js";

const run = promisify(execFile);
/** Bounds on one git call: a history answer never waits or buffers without limit. */
const GIT_TIMEOUT_MS = 30_000;
const GIT_MAX_BUFFER = 64 * 1024 * 1024;
const YAML_FILE = /\.ya?ml$/i;

/**
 * A local checkout's history (`ferry history --dir`): `git log` over the environment's paths and
 * `git ls-tree`/`git cat-file` at each commit. Only regular files count (mode 100644/100755): a
 * symlink in history is never followed, as in the working tree.
 */
export function gitHistorySource(dir: string): HistorySource {
  const git = async (args: string[]): Promise<string> => {
    try {
      const { stdout } = await run("git", ["-C", dir, ...args], {
        timeout: GIT_TIMEOUT_MS,
        maxBuffer: GIT_MAX_BUFFER,
      });
      return stdout;
    } catch (error) {
      const message = String((error as { stderr?: string }).stderr ?? (error as Error).message)
        .trim()
        .split("\n")[0];
      throw new UserError("git-failed", `git ${args[0]} in ${dir} failed: ${message}`);
    }
  };
  return {
    async commits(paths, limit) {
      // Unit separator and record separator: no commit message can break the fields apart.
      const out = await git(["log", `-n${limit}`, "--format=%H%x1f%cI%x1f%an%x1f%B%x1e", "--", ...paths]);
      const commits: HistoryCommit[] = [];
      for (const record of out.split("\x1e")) {
        const [sha, date, author, message] = record.replace(/^\n/, "").split("\x1f");
        if (!sha || !date) continue;
        commits.push({ sha, date: new Date(date), author: author ?? "", message: (message ?? "").trim() });
      }
      return commits;
    },
    filesAt(sha): FileSource {
      let tree: Promise<Map<string, string>> | undefined;
      const entries = () =>
        (tree ??= git(["ls-tree", "-r", "-z", sha]).then((out) => {
          const files = new Map<string, string>();
          for (const line of out.split("\0")) {
            const match = /^(100644|100755) blob ([0-9a-f]+)\t(.+)$/.exec(line);
            if (match) files.set(match[3]!, match[2]!);
          }
          return files;
        }));
      return {
        async listFiles(paths) {
          const all = await entries();
          const found = new Set<string>();
          for (const raw of paths) {
            const path = raw.replace(/^\.\//, "").replace(/\/+$/, "");
            if (all.has(path)) found.add(path);
            for (const name of all.keys())
              if (name.startsWith(`${path}/`) && YAML_FILE.test(name)) found.add(name);
          }
          return [...found];
        },
        async readFile(path) {
          const blob = (await entries()).get(path);
          if (blob === undefined) throw new UserError("file-not-found", `${path} is not in ${shortSha(sha)}`);
          return git(["cat-file", "blob", blob]);
        },
      };
    },
  };
}
