/**
 * Auto-merge timing as on github.com: a PR's mergeability is computed in a background job after it
 * opens, its head moves or its base moves ("If the value is null, then GitHub has started a
 * background job to compute the mergeability. After giving the job time to complete, resubmit the
 * request." https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request). Meanwhile
 * `enablePullRequestAutoMerge` answers "Pull request is in unstable status"
 * (https://github.com/peter-evans/enable-pull-request-automerge/issues/355) and `PUT /merge`
 * answers 405. Once the checks have passed it answers "Pull request is in clean status"
 * (https://github.com/rjwalters/loom/issues/3371). The emulator models the window with the
 * repository setting `mergeabilityLag`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { commentsOn, stagingPull, startWorld, type World } from "../support/app-e2e-world.js";
import { actAs, repos } from "../../packages/sandbox/src/github/index.js";

// Short pauses: the retries are what is tested, not their length.
const ferry = { mergeabilityRetryDelaysMs: [5, 10, 20, 40] };

describe("Ferry while GitHub computes mergeability", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("arms native auto-merge on a PR whose mergeability is still being computed, so it merges when its check passes even if Ferry never hears of the check", async () => {
    world = await startWorld({ ci: false, server: { ferry } });
    repos.setRepoSettings(world.emu, "acme", "config", { mergeabilityLag: 2 });
    await world.push("1.8.0");
    const opened = await stagingPull(world);
    const { data: pull } = await world.as.mona.rest.pulls.get({
      owner: "acme",
      repo: "config",
      pull_number: opened.number,
    });
    expect(pull.auto_merge?.merge_method).toBe("squash");
    // Ferry hears nothing more: only GitHub's own auto-merge can merge it now.
    world.onlyEvents([]);
    actAs.setStatus(world.emu, "acme", "config", opened.head.sha, { context: "ci", state: "success" });
    await world.settle();
    expect((await stagingPull(world)).merged_at).not.toBeNull();
    expect(await commentsOn(world, opened.number)).toEqual([]);
  });

  it("retries a merge GitHub refuses while it recomputes mergeability after the base moved, and posts no 'merge by hand' comment", async () => {
    world = await startWorld({ ci: false, server: { ferry } });
    // Without native auto-merge Ferry merges itself when the required check reports.
    repos.setRepoSettings(world.emu, "acme", "config", { allowAutoMerge: false, mergeabilityLag: 3 });
    await world.push("1.8.0");
    const opened = await stagingPull(world);
    expect(opened.merged_at).toBeNull();
    // Only the check result reaches Ferry (the base push below would start another sync).
    world.onlyEvents(["status"]);
    await actAs.commit(world.emu, "acme", "config", "main", { "README.md": "unrelated\n" }, "docs", {
      as: "mona",
    });
    actAs.setStatus(world.emu, "acme", "config", opened.head.sha, { context: "ci", state: "success" });
    await world.settle();
    expect((await stagingPull(world)).merged_at).not.toBeNull();
    expect(await commentsOn(world, opened.number)).toEqual([]);
  });
});
