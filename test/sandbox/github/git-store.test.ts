/**
 * The emulator's git store asks git once about an object named by its full SHA (its content never
 * changes), hands every caller its own copy, and never remembers that an object was absent.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitRepo } from "../../../packages/sandbox/src/github/git-store.js";

const ident = { name: "mona", email: "mona@example.com", date: "2026-12-01T00:00:00.000Z" };
let dir: string;
let repo: GitRepo;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ferry-git-store-"));
  repo = new GitRepo(join(dir, "repo.git"));
  await repo.init("main");
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function commit(files: Record<string, string>, parents: string[] = []): Promise<string> {
  const changes = Object.entries(files).map(([path, content]) => ({ path, content }));
  const tree = await repo.writeTree(undefined, changes);
  return repo.commitTree({ tree, parents, message: "m", author: ident });
}

/** Counts the git processes `work` starts, through a `git` wrapper first on PATH. */
async function gitRuns(work: () => Promise<unknown>): Promise<number> {
  const bin = join(dir, "bin");
  const log = join(dir, "runs.log");
  const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  await mkdir(bin, { recursive: true });
  await writeFile(join(bin, "git"), `#!/bin/sh\necho run >> ${log}\nexec ${real} "$@"\n`, { mode: 0o755 });
  await writeFile(log, "");
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  try {
    await work();
  } finally {
    process.env.PATH = path;
  }
  return (await readFile(log, "utf8")).split("\n").filter(Boolean).length;
}

describe("the emulator's git store", () => {
  it("reads a commit, a tree, a diff and a merge base named by SHAs from git once; a ref every time", async () => {
    const first = await commit({ "a.yaml": "a: 1\n" });
    const second = await commit({ "a.yaml": "a: 2\n", "b.yaml": "b\n" }, [first]);
    const reads = async () => {
      const { tree } = await repo.readCommit(second);
      await repo.listTree(tree, true);
      await repo.entryAt(tree, "a.yaml");
      await repo.changedFiles(first, second);
      await repo.patch(first, second, "a.yaml");
      await repo.mergeBase(first, second);
      await repo.isAncestor(first, second);
      await repo.commitsBetween(first, second);
    };
    expect(await gitRuns(reads)).toBeGreaterThan(0);
    expect(await gitRuns(reads)).toBe(0);
    const refReads = () => repo.resolveCommit("main").then(() => repo.readRef("refs/heads/main"));
    const once = await gitRuns(refReads);
    expect(once).toBeGreaterThan(0);
    expect(await gitRuns(refReads)).toBe(once);
  });

  it("hands each caller its own copy, so one caller's change is never another's answer", async () => {
    const sha = await commit({ "a.yaml": "a: 1\n" });
    const read = await repo.readCommit(sha);
    read.parents.push("f".repeat(40));
    read.author.name = "eve";
    expect(await repo.readCommit(sha)).toMatchObject({ parents: [], author: { name: "mona" } });
    const entries = await repo.listTree(read.tree, true);
    const blobSha = entries[0]!.sha;
    entries[0]!.path = "changed";
    entries.pop();
    expect((await repo.listTree(read.tree, true)).map((entry) => entry.path)).toEqual(["a.yaml"]);
    const blob = await repo.readBlob(blobSha);
    blob[0] = 0;
    expect((await repo.readBlob(blobSha)).toString()).toBe("a: 1\n");
  });

  it("never remembers an absent object: written later, it is found", async () => {
    const content = "written later\n";
    const sha = execFileSync("git", ["hash-object", "--stdin"], { input: content, encoding: "utf8" }).trim();
    expect(await repo.objectType(sha)).toBeUndefined();
    expect(await repo.writeBlob(content)).toBe(sha);
    expect(await repo.objectType(sha)).toBe("blob");
    const tree = await repo.writeTree(undefined, [{ path: "x.yaml", content: "x\n" }]);
    expect(await repo.entryAt("abcdef0123456789".repeat(2) + "abcdef01", "x.yaml")).toBeUndefined();
    expect(await repo.entryAt(tree, "x.yaml")).toMatchObject({ path: "x.yaml", type: "blob" });
  });

  it("writes a blob it already holds once, under the name git gives it", async () => {
    const expected = execFileSync("git", ["hash-object", "--stdin"], {
      input: "same\n",
      encoding: "utf8",
    }).trim();
    const runs = await gitRuns(async () => {
      expect(await repo.writeBlob("same\n")).toBe(expected);
      expect(await repo.writeBlob(Buffer.from("same\n"))).toBe(expected);
    });
    expect(runs).toBe(1);
  });
});
