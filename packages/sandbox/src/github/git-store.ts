/**
 * Real git repositories behind the GitHub emulator: every blob, tree, commit and ref the
 * emulator serves has a real SHA because it is made by the `git` CLI in a bare repository.
 * Nothing here knows about HTTP or GitHub's JSON; it speaks git objects only.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ZERO_SHA = "0000000000000000000000000000000000000000";

export class GitCommandError extends Error {
  constructor(
    readonly args: string[],
    readonly exitCode: number,
    readonly stderr: string,
  ) {
    super(`git ${args.join(" ")} failed (${exitCode}): ${stderr.trim()}`);
    this.name = "GitCommandError";
  }
}

interface GitRun {
  stdout: Buffer;
  stderr: string;
  exitCode: number;
}

/** Runs git in `gitDir` with a fixed identity and no user/system config, so results do not depend on the host. */
export function runGit(
  gitDir: string,
  args: string[],
  options: { input?: Buffer | string; env?: Record<string, string>; allowExit?: number[] } = {},
): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", args, {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: gitDir,
        GIT_DIR: gitDir,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_TERMINAL_PROMPT: "0",
        ...options.env,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", reject);
    child.on("close", (code) => {
      const exitCode = code ?? -1;
      const run = { stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8"), exitCode };
      if (exitCode === 0 || options.allowExit?.includes(exitCode)) resolve(run);
      else reject(new GitCommandError(args, exitCode, run.stderr));
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "");
  });
}

export interface GitIdentity {
  name: string;
  email: string;
  /** ISO 8601 */
  date: string;
}

export interface GitCommitObject {
  sha: string;
  tree: string;
  parents: string[];
  author: GitIdentity;
  committer: GitIdentity;
  message: string;
}

export interface GitTagObject {
  sha: string;
  object: string;
  type: string;
  tag: string;
  tagger: GitIdentity;
  message: string;
}

export interface GitTreeEntry {
  mode: string;
  type: "blob" | "tree" | "commit";
  sha: string;
  path: string;
  /** Blobs only. */
  size?: number;
}

/** A change for `writeTree`: `sha: null` deletes the path; `content` writes a new blob. */
export interface TreeChange {
  path: string;
  mode?: string;
  sha?: string | null;
  content?: Buffer | string;
}

export interface ChangedFile {
  path: string;
  previousPath?: string;
  status: "added" | "removed" | "modified" | "renamed";
  additions: number;
  deletions: number;
  sha: string;
}

export type MergeOutcome = { clean: true; tree: string } | { clean: false; conflicts: string[] };

/** A look-up found no such object (not remembered: it may be written later). */
const ABSENT = new Error("no such object");

function parseIdentity(line: string): GitIdentity {
  const match = /^(.*) <(.*)> (\d+) ([+-]\d{4})$/.exec(line);
  if (!match) throw new Error(`unreadable git identity: ${line}`);
  return { name: match[1]!, email: match[2]!, date: new Date(Number(match[3]) * 1000).toISOString() };
}

function gitDate(iso: string): string {
  // "@<seconds>" is git's unambiguous raw form (a bare small number reads as an invalid date).
  return `@${Math.floor(new Date(iso).getTime() / 1000)} +0000`;
}

const FULL_SHA = /^[0-9a-f]{40}$/;
/** True when every name is a full object SHA: what git answers about them can never change. */
const immutable = (...names: string[]): boolean => names.every((name) => FULL_SHA.test(name));

/**
 * Answers about objects named by full SHAs (a commit, a tree listing, a diff of two trees, a merge
 * base), kept so the emulator asks git once: an object's content never changes, and nothing here
 * depends on refs. A pending read is shared; a failed one is forgotten. Least recently used out
 * past `MEMO_ENTRIES`. Callers get their own copy of what they may mutate.
 */
class ObjectMemo {
  readonly #entries = new Map<string, Promise<unknown>>();

  remember<T>(key: string, read: () => Promise<T>): Promise<T> {
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
      return hit as Promise<T>;
    }
    const pending = read();
    this.#entries.set(key, pending);
    pending.catch(() => {
      if (this.#entries.get(key) === pending) this.#entries.delete(key);
    });
    if (this.#entries.size > MEMO_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    return pending;
  }
}
const MEMO_ENTRIES = 10_000;

/** One bare repository. */
export class GitRepo {
  readonly #memo = new ObjectMemo();
  /** Blob SHAs this repository is known to hold (written or read through it). */
  readonly #blobs = new Set<string>();

  constructor(readonly gitDir: string) {}

  private git(args: string[], options?: Parameters<typeof runGit>[2]) {
    return runGit(this.gitDir, args, options);
  }

  #knowBlob(sha: string): void {
    if (this.#blobs.size >= MEMO_ENTRIES) this.#blobs.clear();
    this.#blobs.add(sha);
  }

  /** `read`'s answer, asked of git once when every name is a full SHA, else every time. */
  private remember<T>(names: string[], key: string, read: () => Promise<T>): Promise<T> {
    return immutable(...names) ? this.#memo.remember(key, read) : read();
  }

  /** As `remember`, for a look-up whose undefined means "not there (yet)": that is never kept. */
  private async rememberFound<T>(
    names: string[],
    key: string,
    read: () => Promise<T | undefined>,
  ): Promise<T | undefined> {
    try {
      return await this.remember(names, key, async () => (await read()) ?? Promise.reject(ABSENT));
    } catch (error) {
      if (error === ABSENT) return undefined;
      throw error;
    }
  }

  async init(defaultBranch: string): Promise<void> {
    await mkdir(this.gitDir, { recursive: true });
    await this.git(["init", "--bare", "--quiet", `--initial-branch=${defaultBranch}`, this.gitDir]);
    // http-backend: allow anonymous-looking pushes; the emulator authenticates in front of it.
    await this.git(["config", "http.receivepack", "true"]);
    await this.git(["config", "uploadpack.allowAnySHA1InWant", "true"]);
  }

  /**
   * Copies what `refspec` names from another bare repository of the same network (a fork and its
   * parent share objects on GitHub): `+refs/heads/*:refs/heads/*`, or `<sha>:refs/pull/1/head`.
   */
  async fetchFrom(other: GitRepo, refspec: string): Promise<void> {
    await this.git(["fetch", "--quiet", "--no-tags", other.gitDir, refspec]);
  }

  async writeBlob(content: Buffer | string): Promise<string> {
    // Git's own name for the blob; a blob this repository already holds is not written again.
    const bytes = typeof content === "string" ? Buffer.from(content) : content;
    const sha = createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
    if (this.#blobs.has(sha)) return sha;
    const run = await this.git(["hash-object", "-w", "--stdin"], { input: bytes });
    const written = run.stdout.toString().trim();
    this.#knowBlob(written);
    return written;
  }

  async readBlob(sha: string): Promise<Buffer> {
    const blob = await this.remember([sha], `blob ${sha}`, async () => {
      const content = (await this.git(["cat-file", "blob", sha])).stdout;
      this.#knowBlob(sha);
      return content;
    });
    return Buffer.from(blob);
  }

  /** The object's type, or undefined when it does not exist. */
  async objectType(sha: string): Promise<string | undefined> {
    if (!/^[0-9a-f]{4,40}$/i.test(sha)) return undefined;
    return this.rememberFound([sha], `type ${sha}`, async () => {
      const run = await this.git(["cat-file", "-t", sha], { allowExit: [128, 1] });
      return run.exitCode === 0 ? run.stdout.toString().trim() : undefined;
    });
  }

  /** Resolves a branch name, tag, full ref or SHA to a commit SHA; undefined when unknown. */
  async resolveCommit(rev: string): Promise<string | undefined> {
    if (rev.startsWith("-")) return undefined;
    const candidates =
      rev.startsWith("refs/") || /^[0-9a-f]{40}$/i.test(rev)
        ? [rev]
        : [`refs/heads/${rev}`, `refs/tags/${rev}`, rev];
    for (const candidate of candidates) {
      const commit = await this.rememberFound([candidate], `peel ${candidate}`, async () => {
        const run = await this.git(["rev-parse", "--verify", "--quiet", `${candidate}^{commit}`], {
          allowExit: [1, 128],
        });
        return run.exitCode === 0 ? run.stdout.toString().trim() : undefined;
      });
      if (commit !== undefined) return commit;
    }
    return undefined;
  }

  async readCommit(sha: string): Promise<GitCommitObject> {
    return structuredClone(await this.remember([sha], `commit ${sha}`, () => this.parseCommit(sha)));
  }

  private async parseCommit(sha: string): Promise<GitCommitObject> {
    const text = (await this.git(["cat-file", "commit", sha])).stdout.toString("utf8");
    const split = text.indexOf("\n\n");
    const header = split === -1 ? text : text.slice(0, split);
    const message = split === -1 ? "" : text.slice(split + 2);
    const commit: GitCommitObject = {
      sha,
      tree: "",
      parents: [],
      author: undefined!,
      committer: undefined!,
      message,
    };
    for (const line of header.split("\n")) {
      const space = line.indexOf(" ");
      const key = line.slice(0, space);
      const value = line.slice(space + 1);
      if (key === "tree") commit.tree = value;
      else if (key === "parent") commit.parents.push(value);
      else if (key === "author") commit.author = parseIdentity(value);
      else if (key === "committer") commit.committer = parseIdentity(value);
    }
    return commit;
  }

  async commitTree(input: {
    tree: string;
    parents: string[];
    message: string;
    author: GitIdentity;
    committer?: GitIdentity;
  }): Promise<string> {
    const committer = input.committer ?? input.author;
    const args = ["commit-tree", input.tree];
    for (const parent of input.parents) args.push("-p", parent);
    const run = await this.git(args, {
      input: input.message,
      env: {
        GIT_AUTHOR_NAME: input.author.name,
        GIT_AUTHOR_EMAIL: input.author.email,
        GIT_AUTHOR_DATE: gitDate(input.author.date),
        GIT_COMMITTER_NAME: committer.name,
        GIT_COMMITTER_EMAIL: committer.email,
        GIT_COMMITTER_DATE: gitDate(committer.date),
      },
    });
    return run.stdout.toString().trim();
  }

  /** Writes an annotated tag object (not a ref). */
  async writeTag(input: {
    object: string;
    type: string;
    tag: string;
    tagger: GitIdentity;
    message: string;
  }): Promise<string> {
    const seconds = Math.floor(new Date(input.tagger.date).getTime() / 1000);
    const text = `object ${input.object}\ntype ${input.type}\ntag ${input.tag}\ntagger ${input.tagger.name} <${input.tagger.email}> ${seconds} +0000\n\n${input.message.endsWith("\n") ? input.message : `${input.message}\n`}`;
    const run = await this.git(["hash-object", "-t", "tag", "-w", "--stdin"], { input: text });
    return run.stdout.toString().trim();
  }

  async readTag(sha: string): Promise<GitTagObject> {
    return structuredClone(await this.remember([sha], `tag ${sha}`, () => this.parseTag(sha)));
  }

  private async parseTag(sha: string): Promise<GitTagObject> {
    const text = (await this.git(["cat-file", "tag", sha])).stdout.toString("utf8");
    const split = text.indexOf("\n\n");
    const tag: GitTagObject = {
      sha,
      object: "",
      type: "",
      tag: "",
      tagger: undefined!,
      message: split === -1 ? "" : text.slice(split + 2),
    };
    for (const line of (split === -1 ? text : text.slice(0, split)).split("\n")) {
      const space = line.indexOf(" ");
      const key = line.slice(0, space);
      const value = line.slice(space + 1);
      if (key === "object") tag.object = value;
      else if (key === "type") tag.type = value;
      else if (key === "tag") tag.tag = value;
      else if (key === "tagger") tag.tagger = parseIdentity(value);
    }
    return tag;
  }

  async listTree(tree: string, recursive: boolean): Promise<GitTreeEntry[]> {
    const entries = await this.remember([tree], `tree ${recursive} ${tree}`, () =>
      this.readTreeListing(tree, recursive),
    );
    return entries.map((entry) => ({ ...entry }));
  }

  private async readTreeListing(tree: string, recursive: boolean): Promise<GitTreeEntry[]> {
    const args = ["ls-tree", "-l", "-z", ...(recursive ? ["-r", "-t"] : []), tree];
    const text = (await this.git(args)).stdout.toString("utf8");
    return text
      .split("\0")
      .filter(Boolean)
      .map((record) => {
        const tab = record.indexOf("\t");
        const [mode, type, sha, size] = record.slice(0, tab).split(/\s+/);
        const entry: GitTreeEntry = {
          mode: mode!,
          type: type as GitTreeEntry["type"],
          sha: sha!,
          path: record.slice(tab + 1),
        };
        if (type === "blob") entry.size = Number(size);
        return entry;
      });
  }

  /** The entry at `path` inside `tree` ("" is the tree itself). */
  async entryAt(tree: string, path: string): Promise<GitTreeEntry | undefined> {
    const clean = path.replace(/^\/+|\/+$/g, "");
    if (clean === "") return { mode: "040000", type: "tree", sha: tree, path: "" };
    const entry = await this.rememberFound([tree], `entry ${tree} ${clean}`, () =>
      this.readEntry(tree, clean),
    );
    return entry && { ...entry };
  }

  private async readEntry(tree: string, clean: string): Promise<GitTreeEntry | undefined> {
    const run = await this.git(["ls-tree", "-l", "-z", tree, "--", clean], { allowExit: [128] });
    const record = run.stdout.toString("utf8").split("\0").find(Boolean);
    if (!record) return undefined;
    const tab = record.indexOf("\t");
    const [mode, type, sha, size] = record.slice(0, tab).split(/\s+/);
    if (record.slice(tab + 1) !== clean) return undefined;
    const entry: GitTreeEntry = { mode: mode!, type: type as GitTreeEntry["type"], sha: sha!, path: clean };
    if (type === "blob") entry.size = Number(size);
    return entry;
  }

  /** Builds a tree from `baseTree` (or empty) plus changes, through a throwaway index so nested paths just work. */
  async writeTree(baseTree: string | undefined, changes: TreeChange[]): Promise<string> {
    const scratch = await mkdtemp(join(tmpdir(), "ferry-gh-index-"));
    const env = { GIT_INDEX_FILE: join(scratch, "index") };
    try {
      if (baseTree) await this.git(["read-tree", baseTree], { env });
      else await this.git(["read-tree", "--empty"], { env });
      const lines: string[] = [];
      for (const change of changes) {
        const path = change.path.replace(/^\/+/, "");
        if (change.sha === null) {
          // Deleting a folder removes everything under it, as GitHub's tree API does.
          const below = await this.git(["ls-files", "-z", "--", path], { env });
          for (const file of below.stdout.toString("utf8").split("\0").filter(Boolean)) {
            lines.push(`0 ${ZERO_SHA}\t${file}`);
          }
          continue;
        }
        const mode = change.mode ?? "100644";
        const sha = change.content !== undefined ? await this.writeBlob(change.content) : change.sha!;
        if (mode === "040000") {
          await this.git(["update-index", "--index-info"], { env, input: lines.splice(0).join("\n") + "\n" });
          await this.git(["read-tree", `--prefix=${path}/`, sha], { env });
          continue;
        }
        lines.push(`${mode} ${sha}\t${path}`);
      }
      if (lines.length > 0)
        await this.git(["update-index", "--index-info"], { env, input: lines.join("\n") + "\n" });
      return (await this.git(["write-tree"], { env })).stdout.toString().trim();
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  async listRefs(prefix = "refs/"): Promise<{ ref: string; sha: string; type: string }[]> {
    const run = await this.git(["for-each-ref", "--format=%(refname) %(objectname) %(objecttype)", prefix]);
    return run.stdout
      .toString()
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [ref, sha, type] = line.split(" ");
        return { ref: ref!, sha: sha!, type: type! };
      });
  }

  async readRef(ref: string): Promise<string | undefined> {
    const run = await this.git(["show-ref", "--verify", "--hash", ref], { allowExit: [1, 128] });
    return run.exitCode === 0 ? run.stdout.toString().trim() : undefined;
  }

  /**
   * Compare-and-swap: moves `ref` to `next` only if it still points at `expected`
   * (ZERO_SHA: only if it does not exist). Returns false when someone else won.
   */
  async compareAndSwapRef(ref: string, next: string, expected: string): Promise<boolean> {
    const run = await this.git(["update-ref", ref, next, expected], { allowExit: [1, 128] });
    return run.exitCode === 0;
  }

  async deleteRef(ref: string, expected?: string): Promise<boolean> {
    const args = ["update-ref", "-d", ref];
    if (expected) args.push(expected);
    const run = await this.git(args, { allowExit: [1, 128] });
    return run.exitCode === 0;
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return this.remember([ancestor, descendant], `ancestor ${ancestor} ${descendant}`, async () => {
      const run = await this.git(["merge-base", "--is-ancestor", ancestor, descendant], { allowExit: [1] });
      return run.exitCode === 0;
    });
  }

  async mergeBase(a: string, b: string): Promise<string | undefined> {
    return this.remember([a, b], `merge-base ${a} ${b}`, async () => {
      const run = await this.git(["merge-base", a, b], { allowExit: [1] });
      return run.exitCode === 0 ? run.stdout.toString().trim() : undefined;
    });
  }

  /** Commits reachable from `head` and not from `base`, oldest first. */
  async commitsBetween(base: string, head: string): Promise<string[]> {
    const shas = await this.remember([base, head], `between ${base} ${head}`, async () => {
      const run = await this.git(["rev-list", "--reverse", "--topo-order", `${base}..${head}`]);
      return run.stdout.toString().split("\n").filter(Boolean);
    });
    return [...shas];
  }

  async log(head: string, options: { path?: string; max?: number } = {}): Promise<string[]> {
    const args = ["rev-list", "--topo-order"];
    if (options.max) args.push(`--max-count=${options.max}`);
    args.push(head);
    if (options.path) args.push("--", options.path);
    const shas = await this.remember([head], `log ${JSON.stringify(args)}`, async () => {
      const run = await this.git(args);
      return run.stdout.toString().split("\n").filter(Boolean);
    });
    return [...shas];
  }

  /** A real three-way merge of two commits, with git's own merge base and conflict detection. */
  async mergeCommits(ours: string, theirs: string): Promise<MergeOutcome> {
    const outcome = await this.remember([ours, theirs], `merge ${ours} ${theirs}`, async () => {
      const run = await this.git(
        ["merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs],
        { allowExit: [1] },
      );
      const lines = run.stdout.toString().split("\n").filter(Boolean);
      return run.exitCode === 0
        ? ({ clean: true, tree: lines[0]! } as const)
        : ({ clean: false, conflicts: lines.slice(1) } as const);
    });
    return structuredClone(outcome);
  }

  /**
   * Applies the change `commit` made (relative to its first parent) on top of `onto`, like
   * cherry-pick. git 2.39's merge-tree has no --merge-base, so the parent is made the merge
   * base by grafting the two trees onto a synthetic root commit.
   */
  async cherryPickTree(commit: GitCommitObject, onto: string): Promise<MergeOutcome> {
    const ident = { name: "ferry-emulator", email: "emulator@localhost", date: new Date(0).toISOString() };
    const parentTree = commit.parents[0]
      ? (await this.readCommit(commit.parents[0])).tree
      : await this.writeTree(undefined, []);
    const ontoTree = (await this.readCommit(onto)).tree;
    const root = await this.commitTree({ tree: parentTree, parents: [], message: "base", author: ident });
    const theirs = await this.commitTree({
      tree: commit.tree,
      parents: [root],
      message: "theirs",
      author: ident,
    });
    const ours = await this.commitTree({ tree: ontoTree, parents: [root], message: "ours", author: ident });
    return this.mergeCommits(ours, theirs);
  }

  async changedFiles(fromTreeish: string, toTreeish: string): Promise<ChangedFile[]> {
    const files = await this.remember([fromTreeish, toTreeish], `changed ${fromTreeish} ${toTreeish}`, () =>
      this.diffTrees(fromTreeish, toTreeish),
    );
    return files.map((file) => ({ ...file }));
  }

  private async diffTrees(fromTreeish: string, toTreeish: string): Promise<ChangedFile[]> {
    const status = (
      await this.git(["diff-tree", "-r", "-z", "-M", "--raw", fromTreeish, toTreeish])
    ).stdout.toString("utf8");
    const numstat = (
      await this.git(["diff-tree", "-r", "-z", "-M", "--numstat", fromTreeish, toTreeish])
    ).stdout.toString("utf8");
    const counts = new Map<string, { additions: number; deletions: number }>();
    const numParts = numstat.split("\0");
    for (let i = 0; i < numParts.length; i++) {
      const part = numParts[i]!;
      if (!part) continue;
      const [add, del, path] = part.split("\t");
      let target = path;
      if (path === "") {
        // rename: "<add>\t<del>\t\0<from>\0<to>"
        i += 2;
        target = numParts[i];
      }
      counts.set(target ?? "", { additions: Number(add) || 0, deletions: Number(del) || 0 });
    }
    const files: ChangedFile[] = [];
    const parts = status.split("\0");
    for (let i = 0; i < parts.length; i++) {
      const meta = parts[i]!;
      if (!meta.startsWith(":")) continue;
      const [, , , newSha, code] = meta.slice(1).split(" ");
      const letter = code!.charAt(0);
      const first = parts[++i]!;
      let path = first;
      let previousPath: string | undefined;
      if (letter === "R" || letter === "C") {
        previousPath = first;
        path = parts[++i]!;
      }
      const count = counts.get(path) ?? { additions: 0, deletions: 0 };
      const statusName =
        letter === "A" ? "added" : letter === "D" ? "removed" : letter === "R" ? "renamed" : "modified";
      const file: ChangedFile = {
        path,
        status: statusName,
        ...count,
        sha: letter === "D" ? meta.slice(1).split(" ")[2]! : newSha!,
      };
      if (previousPath) file.previousPath = previousPath;
      files.push(file);
    }
    return files;
  }

  async patch(fromTreeish: string, toTreeish: string, path: string): Promise<string> {
    return this.remember([fromTreeish, toTreeish], `patch ${fromTreeish} ${toTreeish} ${path}`, async () => {
      const run = await this.git(["diff", "--no-color", "-M", fromTreeish, toTreeish, "--", path]);
      const text = run.stdout.toString("utf8");
      const hunk = text.indexOf("\n@@");
      return hunk === -1 ? "" : text.slice(hunk + 1);
    });
  }

  async countObjects(): Promise<number> {
    const run = await this.git(["count-objects", "-v"]);
    const size = /size-pack: (\d+)/.exec(run.stdout.toString());
    return Number(size?.[1] ?? 0);
  }
}
