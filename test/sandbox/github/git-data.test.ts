import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectStatus, startWorld, type World } from "../../support/github-emulator-world.js";
import { actAs, inspect } from "../../../packages/sandbox/src/github/index.js";

describe("Git Data API through the real @octokit/rest", () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.emu.close();
  });

  it("creates a branch with one commit (blob, tree, commit, ref), opens a PR and merges it", async () => {
    const octokit = world.as("hubot");
    const owner = "acme";
    const repo = "config";
    const { data: base } = await octokit.rest.git.getRef({ owner, repo, ref: "heads/main" });
    const { data: baseCommit } = await octokit.rest.git.getCommit({
      owner,
      repo,
      commit_sha: base.object.sha,
    });
    const { data: blob } = await octokit.rest.git.createBlob({
      owner,
      repo,
      content: "images:\n  - name: shop\n    newTag: 1.8.0\n",
      encoding: "utf-8",
    });
    const { data: tree } = await octokit.rest.git.createTree({
      owner,
      repo,
      base_tree: baseCommit.tree.sha,
      tree: [{ path: "overlays/staging/kustomization.yaml", mode: "100644", type: "blob", sha: blob.sha }],
    });
    const { data: commit } = await octokit.rest.git.createCommit({
      owner,
      repo,
      message: "Promote shop 1.8.0 to staging",
      tree: tree.sha,
      parents: [base.object.sha],
    });
    expect(commit.parents.map((p) => p.sha)).toEqual([base.object.sha]);
    await octokit.rest.git.createRef({ owner, repo, ref: "refs/heads/ferry/staging", sha: commit.sha });

    const { data: branchRef } = await octokit.rest.git.getRef({ owner, repo, ref: "heads/ferry/staging" });
    expect(branchRef.object.sha).toBe(commit.sha);

    const { data: pr } = await octokit.rest.pulls.create({
      owner,
      repo,
      head: "ferry/staging",
      base: "main",
      title: "Promote shop 1.8.0 to staging",
    });
    expect(pr.head.sha).toBe(commit.sha);
    const { data: files } = await octokit.rest.pulls.listFiles({ owner, repo, pull_number: pr.number });
    expect(files.map((f) => [f.filename, f.status, f.additions, f.deletions])).toEqual([
      ["overlays/staging/kustomization.yaml", "modified", 1, 1],
    ]);

    const { data: merged } = await octokit.rest.pulls.merge({
      owner,
      repo,
      pull_number: pr.number,
      merge_method: "squash",
      sha: commit.sha,
    });
    expect(merged.merged).toBe(true);
    expect(
      await inspect.readFile(world.emu, owner, repo, "main", "overlays/staging/kustomization.yaml"),
    ).toContain("newTag: 1.8.0");
    const { data: after } = await octokit.rest.pulls.get({ owner, repo, pull_number: pr.number });
    expect(after).toMatchObject({ state: "closed", merged: true, merge_commit_sha: merged.sha });
  });

  it("reads files and folders through the contents API, base64-encoded", async () => {
    const octokit = world.as("eve");
    const { data: file } = await octokit.rest.repos.getContent({
      owner: "acme",
      repo: "config",
      path: "overlays/staging/kustomization.yaml",
    });
    if (Array.isArray(file) || file.type !== "file") throw new Error("expected a file");
    expect(Buffer.from(file.content, "base64").toString()).toBe(
      "images:\n  - name: shop\n    newTag: 1.7.0\n",
    );
    const { data: dir } = await octokit.rest.repos.getContent({
      owner: "acme",
      repo: "config",
      path: "overlays",
    });
    expect(Array.isArray(dir) && dir.map((e) => [e.name, e.type])).toEqual([["staging", "dir"]]);
    await expectStatus(
      octokit.rest.repos.getContent({ owner: "acme", repo: "config", path: "nope.yaml" }),
      404,
    );
  });

  it("updates a file through the contents API only with the current blob sha (409 otherwise)", async () => {
    const octokit = world.as("hubot");
    const path = "README.md";
    const { data } = await octokit.rest.repos.getContent({ owner: "acme", repo: "config", path });
    const sha = (data as { sha: string }).sha;
    const content = Buffer.from("changed\n").toString("base64");
    await expectStatus(
      octokit.rest.repos.createOrUpdateFileContents({
        owner: "acme",
        repo: "config",
        path,
        message: "m",
        content,
      }),
      422,
    );
    await expectStatus(
      octokit.rest.repos.createOrUpdateFileContents({
        owner: "acme",
        repo: "config",
        path,
        message: "m",
        content,
        sha: "0".repeat(40),
      }),
      409,
    );
    const { data: written, status } = await octokit.rest.repos.createOrUpdateFileContents({
      owner: "acme",
      repo: "config",
      path,
      message: "m",
      content,
      sha,
    });
    expect(status).toBe(200);
    expect(written.content?.sha).not.toBe(sha);
    expect(await inspect.readFile(world.emu, "acme", "config", "main", path)).toBe("changed\n");
  });

  it("moves refs only by compare-and-swap: a non-fast-forward update needs force", async () => {
    const octokit = world.as("hubot");
    const owner = "acme";
    const repo = "config";
    const main = (await octokit.rest.git.getRef({ owner, repo, ref: "heads/main" })).data.object.sha;
    const { data: tip } = await octokit.rest.git.getCommit({ owner, repo, commit_sha: main });
    const side = (
      await octokit.rest.git.createCommit({
        owner,
        repo,
        message: "side",
        tree: tip.tree.sha,
        parents: [main],
      })
    ).data.sha;
    const other = (
      await octokit.rest.git.createCommit({
        owner,
        repo,
        message: "other",
        tree: tip.tree.sha,
        parents: [main],
      })
    ).data.sha;
    await octokit.rest.git.createRef({ owner, repo, ref: "refs/heads/ferry/staging", sha: side });
    const exists = await expectStatus(
      octokit.rest.git.createRef({ owner, repo, ref: "refs/heads/ferry/staging", sha: side }),
      422,
    );
    expect(exists.message).toBe("Reference already exists");
    const notFf = await expectStatus(
      octokit.rest.git.updateRef({ owner, repo, ref: "heads/ferry/staging", sha: other }),
      422,
    );
    expect(notFf.message).toBe("Update is not a fast forward");
    const { data: forced } = await octokit.rest.git.updateRef({
      owner,
      repo,
      ref: "heads/ferry/staging",
      sha: other,
      force: true,
    });
    expect(forced.object.sha).toBe(other);
    const { data: matching } = await octokit.rest.git.listMatchingRefs({ owner, repo, ref: "heads/ferry/" });
    expect(matching.map((r) => r.ref)).toEqual(["refs/heads/ferry/staging"]);
    await octokit.rest.git.deleteRef({ owner, repo, ref: "heads/ferry/staging" });
    await expectStatus(octokit.rest.git.getRef({ owner, repo, ref: "heads/ferry/staging" }), 404);
  });

  it("reads trees recursively and compares two commits", async () => {
    const octokit = world.as("hubot");
    const sha = await actAs.commit(
      world.emu,
      "acme",
      "config",
      "feature",
      { "overlays/prod/kustomization.yaml": "images: []\n" },
      "add prod",
    );
    const { data: tree } = await octokit.rest.git.getTree({
      owner: "acme",
      repo: "config",
      tree_sha: sha,
      recursive: "1",
    });
    expect(tree.tree.filter((e) => e.type === "blob").map((e) => e.path)).toEqual([
      "README.md",
      "overlays/prod/kustomization.yaml",
      "overlays/staging/kustomization.yaml",
    ]);
    const { data: compare } = await octokit.rest.repos.compareCommitsWithBasehead({
      owner: "acme",
      repo: "config",
      basehead: "main...feature",
    });
    expect(compare).toMatchObject({ status: "ahead", ahead_by: 1, behind_by: 0, total_commits: 1 });
    expect(compare.files?.map((f) => f.filename)).toEqual(["overlays/prod/kustomization.yaml"]);
  });

  it("serves lightweight and annotated tags: the ref, then the tag object pointing at the commit", async () => {
    const octokit = world.as("hubot");
    const main = (await inspect.branchSha(world.emu, "acme", "config", "main"))!;
    await actAs.tag(world.emu, "acme", "config", "v1.0.0", "main");
    const tagSha = await actAs.tag(world.emu, "acme", "config", "v1.1.0", "main", {
      annotated: true,
      message: "release 1.1.0",
    });
    const { data: light } = await octokit.rest.git.getRef({
      owner: "acme",
      repo: "config",
      ref: "tags/v1.0.0",
    });
    expect(light.object).toMatchObject({ type: "commit", sha: main });
    const { data: annotatedRef } = await octokit.rest.git.getRef({
      owner: "acme",
      repo: "config",
      ref: "tags/v1.1.0",
    });
    expect(annotatedRef.object).toMatchObject({ type: "tag", sha: tagSha });
    const { data: tag } = await octokit.rest.git.getTag({ owner: "acme", repo: "config", tag_sha: tagSha });
    expect(tag).toMatchObject({
      tag: "v1.1.0",
      message: "release 1.1.0\n",
      object: { type: "commit", sha: main },
    });
    const { data: created } = await octokit.rest.git.createTag({
      owner: "acme",
      repo: "config",
      tag: "v2",
      message: "two",
      object: main,
      type: "commit",
    });
    expect(created.object.sha).toBe(main);
  });

  it("lets exactly one of many concurrent fast-forward updates from the same tip win; the others get 422", async () => {
    const octokit = world.as("hubot");
    const owner = "acme";
    const repo = "config";
    const tip = (await inspect.branchSha(world.emu, owner, repo, "main"))!;
    const { data: tipCommit } = await octokit.rest.git.getCommit({ owner, repo, commit_sha: tip });
    const candidates = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        octokit.rest.git.createCommit({
          owner,
          repo,
          message: `writer ${i}`,
          tree: tipCommit.tree.sha,
          parents: [tip],
        }),
      ),
    );
    const outcomes = await Promise.allSettled(
      candidates.map(({ data }) =>
        octokit.rest.git.updateRef({ owner, repo, ref: "heads/main", sha: data.sha }),
      ),
    );
    const winners = outcomes.filter((o) => o.status === "fulfilled");
    const losers = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
    expect(winners).toHaveLength(1);
    expect(losers.map((o) => (o.reason as { status: number }).status)).toEqual(Array(11).fill(422));
    const final = await inspect.branchSha(world.emu, owner, repo, "main");
    expect(candidates.map(({ data }) => data.sha)).toContain(final);
  });
});
