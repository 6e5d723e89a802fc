/**
 * Merge methods as on github.com: a repository may allow only some of squash, merge commits and
 * rebase (`allow_squash_merge`, `allow_merge_commit`, `allow_rebase_merge` on
 * https://docs.github.com/en/rest/repos/repos#get-a-repository). `PUT /merge` refuses another with
 * 405 ("Squash merges are not allowed on this repository.",
 * https://github.com/ridedott/merge-me-action/issues/329) and `enablePullRequestAutoMerge` with
 * "Merge method squash merging is not allowed on this repository"
 * (https://github.com/tokuhirom/mutsu/pull/5583).
 */
import { afterEach, describe, expect, it } from "vitest";
import { commentsOn, stagingPull, startWorld, type World } from "../support/app-e2e-world.js";
import { actAs, repos } from "../../packages/sandbox/src/github/index.js";

/** The parents of the commit that merged the PR: two for a merge commit, one for squash or rebase. */
async function mergeParents(world: World, number: number): Promise<number> {
  const { data: pull } = await world.as.mona.rest.pulls.get({
    owner: "acme",
    repo: "config",
    pull_number: number,
  });
  const { data: commit } = await world.as.mona.rest.git.getCommit({
    owner: "acme",
    repo: "config",
    commit_sha: pull.merge_commit_sha!,
  });
  return commit.parents.length;
}

describe("Ferry on a repository that allows only merge commits", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("arms native auto-merge with the merge-commit method, and the PR merges when its check passes", async () => {
    world = await startWorld({ ci: false });
    repos.setRepoSettings(world.emu, "acme", "config", { allowSquashMerge: false, allowRebaseMerge: false });
    await world.push("1.8.0");
    const opened = await stagingPull(world);
    const { data: pull } = await world.as.mona.rest.pulls.get({
      owner: "acme",
      repo: "config",
      pull_number: opened.number,
    });
    expect(pull.auto_merge?.merge_method).toBe("merge");
    actAs.setStatus(world.emu, "acme", "config", opened.head.sha, { context: "ci", state: "success" });
    await world.settle();
    expect((await stagingPull(world)).merged_at).not.toBeNull();
    expect(await mergeParents(world, opened.number)).toBe(2);
  });

  it("merges itself with a merge commit when auto-merge is off, and posts no 'merge by hand' comment", async () => {
    world = await startWorld({ ci: false });
    repos.setRepoSettings(world.emu, "acme", "config", {
      allowAutoMerge: false,
      allowSquashMerge: false,
      allowRebaseMerge: false,
    });
    await world.push("1.8.0");
    const opened = await stagingPull(world);
    actAs.setStatus(world.emu, "acme", "config", opened.head.sha, { context: "ci", state: "success" });
    await world.settle();
    expect((await stagingPull(world)).merged_at).not.toBeNull();
    expect(await mergeParents(world, opened.number)).toBe(2);
    expect(await commentsOn(world, opened.number)).toEqual([]);
  });
});
