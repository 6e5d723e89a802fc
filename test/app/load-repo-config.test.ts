import { describe, expect, it } from "vitest";
import { UserError } from "../../src/core/errors.js";
import { loadRepoConfig } from "../../src/app/load-repo-config.js";
import type { TreeEntry } from "../../src/app/github-port.js";
import { configRepo, FakeGitHub, FakeRegistry, fakeDeps } from "../support/app-fakes.js";

describe("loadRepoConfig", () => {
  it("reads .github/ferry.yml as a blob of the base's tree, the listing the planner reads next", async () => {
    const github = new FakeGitHub(configRepo());
    const loaded = await loadRepoConfig(fakeDeps(github, new FakeRegistry()), "main");
    expect(loaded.ok && Object.keys(loaded.config.environments)).toEqual(["staging", "prod"]);
    expect(github.calls).toEqual(["getBranch", "listTree", "readBlob"]);
  });

  it("reports a missing config without reading any file", async () => {
    const files = configRepo();
    delete files[".github/ferry.yml"];
    const github = new FakeGitHub(files);
    expect(await loadRepoConfig(fakeDeps(github, new FakeRegistry()), "main")).toEqual({
      ok: false,
      reason: "missing",
    });
    expect(github.calls).not.toContain("readBlob");
  });

  it("upserts the broken-config issue on a sync's read, but never on a read-only one (GET /status)", async () => {
    const files = configRepo();
    files[".github/ferry.yml"] = "images: {}\nenvironments: { prod: { paths: [../x] } }\n";
    const github = new FakeGitHub(files);
    const deps = fakeDeps(github, new FakeRegistry());
    expect((await loadRepoConfig(deps, "main", { readOnly: true })).ok).toBe(false);
    expect(github.issues).toEqual([]);
    expect((await loadRepoConfig(deps, "main")).ok).toBe(false);
    expect(github.issues).toHaveLength(1);
  });

  it("refuses a config that is a symlink instead of following it", async () => {
    class LinkedConfig extends FakeGitHub {
      override async listTree(treeSha: string): Promise<TreeEntry[]> {
        return (await super.listTree(treeSha)).map((entry) =>
          entry.path === ".github/ferry.yml" ? { ...entry, type: "symlink" as const } : entry,
        );
      }
    }
    const github = new LinkedConfig(configRepo());
    await expect(loadRepoConfig(fakeDeps(github, new FakeRegistry()), "main")).rejects.toThrow(
      /symlink; Ferry never follows links/,
    );
  });

  it("falls back to the contents API when the tree is too large to list in one request", async () => {
    class HugeTree extends FakeGitHub {
      override async listTree(): Promise<TreeEntry[]> {
        throw new UserError("tree-too-large", "the repository tree is too large to list in one request");
      }
    }
    const github = new HugeTree(configRepo());
    const loaded = await loadRepoConfig(fakeDeps(github, new FakeRegistry()), "main");
    expect(loaded.ok).toBe(true);
    expect(github.calls).toContain("readFile");
  });
});
