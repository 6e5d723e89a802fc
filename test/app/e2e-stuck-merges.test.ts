/**
 * Ferry PRs that nothing used to merge once Ferry had stopped trying (docs/reliability.md rows
 * 70–73). Each ends merged:
 * - an approval arriving on a base that requires one, with repository auto-merge off (GitHub's
 *   default, https://docs.github.com/en/repositories/managing-your-repositorys-settings-and-features/configuring-pull-request-merges/managing-auto-merge-for-pull-requests-in-your-repository):
 *   the `pull_request_review` event retries the merge;
 * - mergeability GitHub computed after Ferry's last retry (`mergeable: null` until then,
 *   https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request): the periodic scan retries;
 * - a merge group whose CI failed once: `pull_request` `dequeued` re-adds the PR;
 * - on a base with a merge queue, a PR armed for auto-merge after its checks passed, which GitHub
 *   never queues (https://github.com/ClickHouse/ClickHouse/pull/98574): Ferry does not arm there,
 *   and the scan enqueues one a person armed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { commentsOn, stagingPull, startWorld, type World } from "../support/app-e2e-world.js";
import { actAs, inspect, repos } from "../../packages/sandbox/src/github/index.js";

const ferry = { mergeabilityRetryDelaysMs: [5, 10] };
const arm = `mutation($id: ID!) { enablePullRequestAutoMerge(input: { pullRequestId: $id, mergeMethod: SQUASH }) { clientMutationId } }`;

describe("Ferry PRs stuck after Ferry's last merge attempt", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("merges when the required approval arrives, with repository auto-merge off", async () => {
    world = await startWorld({ ci: true, server: { ferry } });
    repos.setRepoSettings(world.emu, "acme", "config", { allowAutoMerge: false });
    repos.protectBranch(world.emu, "acme", "config", "main", {
      requiredChecks: ["ci"],
      requiredApprovals: 1,
    });
    await world.push("1.8.0");
    const opened = await stagingPull(world);
    expect(opened.merged_at).toBeNull();
    // Waiting for a review is no reason to ask for a merge by hand.
    expect(await commentsOn(world, opened.number)).toEqual([]);
    await world.as.mona.rest.pulls.createReview({
      owner: "acme",
      repo: "config",
      pull_number: opened.number,
      event: "APPROVE",
    });
    await world.settle();
    expect((await stagingPull(world)).merged_at).not.toBeNull();
    expect(await commentsOn(world, opened.number)).toEqual([]);
  });

  it("merges on the next scan a PR whose mergeability GitHub computed after Ferry stopped asking", async () => {
    world = await startWorld({ ci: false, server: { ferry } });
    repos.setRepoSettings(world.emu, "acme", "config", { allowAutoMerge: false, mergeabilityLag: 1000 });
    await world.push("1.8.0");
    const opened = await stagingPull(world);
    actAs.setStatus(world.emu, "acme", "config", opened.head.sha, { context: "ci", state: "success" });
    await world.settle();
    expect((await stagingPull(world)).merged_at).toBeNull();
    // GitHub's background job finishes; no event says so.
    world.emu.repo("acme", "config").issues.get(opened.number)!.pull!.mergeabilityUnknownFor = 0;
    await world.server.scanNow();
    await world.settle();
    expect((await stagingPull(world)).merged_at).not.toBeNull();
    expect(await commentsOn(world, opened.number)).toEqual([]);
  });

  it("puts a PR back into the merge queue after its merge group failed, and it merges", async () => {
    world = await startWorld({ ci: false, server: { ferry } });
    world.emu.repo("acme", "config").protections.clear();
    repos.setRepoSettings(world.emu, "acme", "config", { allowAutoMerge: false });
    repos.addRuleset(world.emu, "acme", "config", { name: "main", requiredChecks: ["ci"], mergeQueue: {} });
    await world.push("1.8.0");
    const opened = await stagingPull(world);
    // CI runs on merge groups from now on; the first group's fails. One check event reaches
    // Ferry for the PR's head, so only the dequeue can bring it back.
    actAs.setCi(world.emu, "acme", "config", { context: "ci", conclusion: "success" });
    world.emu.faults.failMergeGroups({ count: 1 });
    actAs.setStatus(world.emu, "acme", "config", opened.head.sha, { context: "ci", state: "success" });
    await world.settle();
    const pull = await stagingPull(world);
    expect(pull.merged_at).not.toBeNull();
    expect(await commentsOn(world, pull.number)).toEqual([]);
  });

  it("never arms auto-merge on a merge-queue base, and the scan enqueues a PR someone armed after its checks passed", async () => {
    world = await startWorld({ ci: false, server: { ferry } });
    world.emu.repo("acme", "config").protections.clear();
    repos.addRuleset(world.emu, "acme", "config", { name: "main", requiredChecks: ["ci"], mergeQueue: {} });
    // The base reads protected (a ruleset covers it) and the repository allows auto-merge.
    const { data: base } = await world.as.mona.rest.repos.getBranch({
      owner: "acme",
      repo: "config",
      branch: "main",
    });
    expect(base.protected).toBe(true);
    await world.push("1.8.0");
    const opened = await inspect.getPull(world.emu, "acme", "config", (await stagingPull(world)).number);
    expect(opened.auto_merge).toBeNull();
    // Ferry hears nothing while the check passes and a person clicks "merge when ready".
    world.onlyEvents([]);
    actAs.setStatus(world.emu, "acme", "config", opened.head.sha, { context: "ci", state: "success" });
    actAs.setCi(world.emu, "acme", "config", { context: "ci", conclusion: "success" });
    await world.as.mona.graphql(arm, { id: opened.node_id });
    await world.settle();
    const armed = await inspect.getPull(world.emu, "acme", "config", opened.number);
    expect(armed.auto_merge).not.toBeNull();
    expect(armed.merged_at).toBeNull();
    world.onlyEvents(undefined);
    await world.server.scanNow();
    await world.settle();
    expect((await stagingPull(world)).merged_at).not.toBeNull();
    expect(await commentsOn(world, opened.number)).toEqual([]);
  });
});
