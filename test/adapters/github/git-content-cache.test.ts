/**
 * The process-wide cache of git objects by SHA: bounded, least recently used out, shared loads,
 * and the adapter reading through it against the GitHub emulator (one request per SHA, ever).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitContentCache, gitBlobSha, WeightedLru } from "../../../src/adapters/github/git-content-cache.js";
import { createGitHubRepo, type GitHubRepoAdapter } from "../../../src/adapters/github/github-repo.js";
import { installApp, startWorld, type World } from "../../support/github-emulator-world.js";

describe("WeightedLru", () => {
  it("evicts the least recently used values once the total weight passes the budget", () => {
    const lru = new WeightedLru<string>(10, (text) => text.length);
    lru.set("a", "aaaa");
    lru.set("b", "bbbb");
    expect(lru.get("a")).toBe("aaaa"); // a is now the most recently used
    lru.set("c", "cccc");
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBe("aaaa");
    expect(lru.get("c")).toBe("cccc");
    expect(lru.weight).toBe(8);
  });

  it("does not keep a value heavier than the whole budget, nor evict others for it", () => {
    const lru = new WeightedLru<string>(4, (text) => text.length);
    lru.set("small", "ab");
    lru.set("huge", "abcdefgh");
    expect(lru.get("huge")).toBeUndefined();
    expect(lru.get("small")).toBe("ab");
  });
});

describe("GitContentCache", () => {
  it("loads a SHA once, also when two readers ask at the same time", async () => {
    const cache = new GitContentCache();
    let loads = 0;
    const load = async () => {
      loads++;
      return "text";
    };
    const [a, b] = await Promise.all([
      cache.blob("acme/config", "abc", load),
      cache.blob("acme/config", "abc", load),
    ]);
    expect([a, b, await cache.blob("acme/config", "ABC", load)]).toEqual(["text", "text", "text"]);
    expect(loads).toBe(1);
  });

  it("keeps repositories apart: the same SHA in another repository is loaded through that repository", async () => {
    const cache = new GitContentCache();
    await cache.blob("acme/config", "abc", async () => "from config");
    expect(await cache.blob("other/repo", "abc", async () => "from other")).toBe("from other");
  });

  it("does not remember a failed load", async () => {
    const cache = new GitContentCache();
    await expect(cache.blob("acme/config", "abc", () => Promise.reject(new Error("503")))).rejects.toThrow(
      "503",
    );
    expect(await cache.blob("acme/config", "abc", async () => "later")).toBe("later");
  });

  it("computes the blob SHA git computes", () => {
    const dir = mkdtempSync(join(tmpdir(), "ferry-blob-"));
    try {
      const text = 'images:\n  - name: shop\n    newTag: "1.8.0" # ünïcode\n';
      writeFileSync(join(dir, "f.yaml"), text);
      expect(gitBlobSha(text)).toBe(
        execFileSync("git", ["hash-object", join(dir, "f.yaml")], { encoding: "utf8" }).trim(),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("GitHubRepoAdapter with a content cache, against the emulator", () => {
  let world: World;
  let cache: GitContentCache;
  let github: GitHubRepoAdapter;
  beforeEach(async () => {
    world = await startWorld();
    const app = await installApp(world);
    cache = new GitContentCache();
    github = createGitHubRepo(app.installation, "acme", "config", cache);
  });
  afterEach(async () => {
    await world.emu.close();
  });

  const gitReads = (from: number) =>
    world.emu
      .requests()
      .slice(from)
      .filter((request) => request.method === "GET" && /\/git\/(trees|blobs)\//.test(request.path)).length;

  it("lists a tree and reads a blob once, however often they are asked for", async () => {
    const base = (await github.getBranch("main"))!;
    const mark = world.emu.requests().length;
    const entries = await github.listTree(base.treeSha);
    const blob = entries.find((entry) => entry.type === "blob")!;
    const first = await github.readBlob(blob.sha);
    expect(await github.listTree(base.treeSha)).toEqual(entries);
    expect(await github.readBlob(blob.sha)).toBe(first);
    expect(gitReads(mark)).toBe(2);
  });

  it("reads back a file it wrote itself without a request", async () => {
    const base = (await github.getBranch("main"))!;
    const content = 'newTag: "1.8.0"\n';
    const commit = await github.createCommit({
      baseTreeSha: base.treeSha,
      parents: [base.sha],
      files: { "overlays/staging/values.yaml": content },
      message: "test",
    });
    const entry = (await github.listTree(commit.treeSha)).find(
      (e) => e.path === "overlays/staging/values.yaml",
    )!;
    const mark = world.emu.requests().length;
    expect(await github.readBlob(entry.sha)).toBe(content);
    expect(gitReads(mark)).toBe(0);
  });
});
