/**
 * One revision of a local repository written out into a temporary folder, for rendering it
 * (`ferry diff --base REF`): `git read-tree` into a private index, then `git checkout-index` into
 * the folder. The repository itself is not touched (no worktree registered, no index or HEAD
 * moved). The tree is sized with `git ls-tree` first, so a revision with too many files or bytes is
 * refused before anything is written. docs/diff.md "ferry diff".
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { UserError } from "../../core/errors.js";

const run = promisify(execFile);
const GIT_TIMEOUT_MS = 60_000;
const GIT_MAX_BUFFER = 64 * 1024 * 1024;

export interface TreeExportLimits {
  maxFiles: number;
  maxBytes: number;
}

export const DEFAULT_TREE_EXPORT_LIMITS: TreeExportLimits = { maxFiles: 50_000, maxBytes: 512 * 1024 * 1024 };

export interface ExportedTree {
  /** The folder holding the revision's files. */
  dir: string;
  /** The commit the ref named. */
  commit: string;
  remove(): Promise<void>;
}

/** What git may read from the caller's environment: no config from outside the repository. */
function gitEnv(env: NodeJS.ProcessEnv, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...(env.PATH !== undefined ? { PATH: env.PATH } : {}),
    HOME: env.HOME ?? tmpdir(),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    ...extra,
  };
}

async function git(repo: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await run("git", ["-C", repo, ...args], {
      timeout: GIT_TIMEOUT_MS,
      maxBuffer: GIT_MAX_BUFFER,
      env,
    });
    return stdout;
  } catch (error) {
    const stderr = String((error as { stderr?: string }).stderr ?? "").trim();
    const cause = stderr.split("\n").find((line) => /^(fatal|error):/.test(line)) ?? stderr.split("\n")[0];
    throw new UserError(
      "git-failed",
      `git ${args.find((arg) => !arg.startsWith("-"))} in ${repo} failed: ${cause || (error as Error).message}`,
    );
  }
}

/** The commit `ref` names in `repo`; a ref that is not one is a UserError naming it. */
export async function resolveCommit(repo: string, ref: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (ref.startsWith("-") || ref.includes("\0"))
    throw new UserError("invalid-ref", `${JSON.stringify(ref)} is not a git revision`);
  const out = await git(
    repo,
    ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`],
    env,
  ).catch(() => "");
  const commit = out.trim();
  if (!/^[0-9a-f]{40,64}$/.test(commit))
    throw new UserError("invalid-ref", `${JSON.stringify(ref)} is not a commit in ${repo}`);
  return commit;
}

/** Writes `ref`'s tree into a new temporary folder. */
export async function exportTree(
  repo: string,
  ref: string,
  env: NodeJS.ProcessEnv,
  limits: TreeExportLimits = DEFAULT_TREE_EXPORT_LIMITS,
): Promise<ExportedTree> {
  const safeEnv = gitEnv(env);
  const commit = await resolveCommit(repo, ref, safeEnv);
  let files = 0;
  let bytes = 0;
  for (const line of (await git(repo, ["ls-tree", "-r", "-l", "-z", commit], safeEnv)).split("\0")) {
    const match = /^\d+ blob [0-9a-f]+ +(\d+)\t/.exec(line);
    if (!match) continue;
    files += 1;
    bytes += Number(match[1]);
  }
  if (files > limits.maxFiles || bytes > limits.maxBytes)
    throw new UserError(
      "tree-too-large",
      `${ref} holds ${files} files, ${bytes} bytes: more than the ${limits.maxFiles} files or ${limits.maxBytes} bytes ferry diff exports`,
    );
  const scratch = await mkdtemp(path.join(tmpdir(), "ferry-diff-"));
  const dir = path.join(scratch, "tree");
  const remove = () => rm(scratch, { recursive: true, force: true });
  try {
    await mkdir(dir);
    const withIndex = gitEnv(env, { GIT_INDEX_FILE: path.join(scratch, "index") });
    await git(repo, ["read-tree", commit], withIndex);
    await git(
      repo,
      [`--work-tree=${dir}`, "checkout-index", "--all", "--force", `--prefix=${dir}/`],
      withIndex,
    );
  } catch (error) {
    await remove();
    throw error;
  }
  return { dir, commit, remove };
}
