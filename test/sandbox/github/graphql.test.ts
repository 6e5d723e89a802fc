import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startWorld, type World } from "../../support/github-emulator-world.js";
import { actAs, inspect, repos } from "../../../packages/sandbox/src/github/index.js";

const owner = "acme";
const repo = "config";

describe("the GraphQL operations Ferry uses", () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(async () => {
    await world.emu.close();
  });

  const pin = `mutation($id: ID!) { pinIssue(input: { issueId: $id }) { clientMutationId } }`;

  it("pins up to three issues per repository and refuses a fourth", async () => {
    const octokit = world.as("mona");
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await octokit.rest.issues.create({ owner, repo, title: `issue ${i}` })).data.node_id);
    for (const id of ids.slice(0, 3)) await octokit.graphql(pin, { id });
    await octokit.graphql(pin, { id: ids[0] });
    await expect(octokit.graphql(pin, { id: ids[3] })).rejects.toThrow(
      "You can't pin more than 3 issues in a repository.",
    );
    await octokit.graphql(`mutation($id: ID!) { unpinIssue(input: { issueId: $id }) { clientMutationId } }`, {
      id: ids[0],
    });
    await octokit.graphql(pin, { id: ids[3] });
  });

  it("refuses to pin for a user without triage access", async () => {
    const { data } = await world.as("eve").rest.issues.create({ owner, repo, title: "eve's" });
    await expect(world.as("eve").graphql(pin, { id: data.node_id })).rejects.toThrow(/not accessible/);
  });

  it("looks a pull request's node id up by number, with inline arguments", async () => {
    await actAs.commit(world.emu, owner, repo, "feature", { "f.txt": "f\n" }, "f", { as: "hubot" });
    const number = await actAs.openPullRequest(world.emu, owner, repo, { head: "feature", as: "hubot" });
    const result = await world
      .as("hubot")
      .graphql<{ repository: { pullRequest: { id: string; number: number } } }>(
        `query { repository(owner: "acme", name: "config") { pullRequest(number: ${number}) { id number } } }`,
      );
    expect(result.repository.pullRequest).toMatchObject({
      id: (await inspect.getPull(world.emu, owner, repo, number)).node_id,
      number,
    });
  });

  // GitHub's GraphQL schema: EnablePullRequestAutoMergeInput.expectedHeadOid, "The expected head OID of
  // the pull request." The refusal carries the message GitHub gives a merge whose expected head moved
  // ("Head branch was modified. Review and try the merge again.", as reported for mergePullRequest
  // in StefanMaron/BusinessCentral.AL.Runner#3391). A writer's later push leaves it armed: GitHub's
  // auto-merge docs disable it only for a push by someone without write permissions.
  it("refuses enablePullRequestAutoMerge when expectedHeadOid is not the head, and enables it when it is", async () => {
    repos.protectBranch(world.emu, owner, repo, "main", { requiredChecks: ["ci"] });
    const first = await actAs.commit(world.emu, owner, repo, "auto", { "a.txt": "a\n" }, "a", {
      as: "hubot",
    });
    const number = await actAs.openPullRequest(world.emu, owner, repo, { head: "auto", as: "hubot" });
    const second = await actAs.commit(world.emu, owner, repo, "auto", { "a.txt": "b\n" }, "b", {
      as: "hubot",
    });
    const id = (await inspect.getPull(world.emu, owner, repo, number)).node_id;
    const enable = `mutation($id: ID!, $head: GitObjectID) { enablePullRequestAutoMerge(input: { pullRequestId: $id, mergeMethod: SQUASH, expectedHeadOid: $head }) { clientMutationId } }`;
    await expect(world.as("hubot").graphql(enable, { id, head: first })).rejects.toThrow(
      "Head branch was modified. Review and try the merge again.",
    );
    expect((await inspect.getPull(world.emu, owner, repo, number)).auto_merge).toBeNull();
    await world.as("hubot").graphql(enable, { id, head: second });
    expect((await inspect.getPull(world.emu, owner, repo, number)).auto_merge).not.toBeNull();
  });

  it("answers an unknown node id with a NOT_FOUND error", async () => {
    await expect(
      world
        .as("hubot")
        .graphql(
          `mutation { enablePullRequestAutoMerge(input: {pullRequestId: "PR_nope", mergeMethod: MERGE}) { clientMutationId } }`,
        ),
    ).rejects.toThrow(/Could not resolve to a node/);
  });
});

/**
 * `enqueuePullRequest` on a base whose ruleset has a merge queue. The queue here holds its entries:
 * it requires `queue-ci`, which the merge group only gets from a CI run an hour away.
 */
describe("enqueuePullRequest", () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
    await actAs.createBranch(world.emu, owner, repo, "release", "main");
    repos.addRuleset(world.emu, owner, repo, {
      branches: ["release"],
      requiredChecks: ["queue-ci"],
      mergeQueue: {},
    });
    actAs.setCi(world.emu, owner, repo, { context: "slow", delayMs: 3_600_000 });
  });
  afterEach(async () => {
    await world.emu.close();
  });

  const enqueue = `mutation($id: ID!) { enqueuePullRequest(input: { pullRequestId: $id }) { clientMutationId } }`;

  async function readyPull(head: string): Promise<string> {
    const sha = await actAs.commit(world.emu, owner, repo, head, { [`${head}.txt`]: "x\n" }, head, {
      as: "hubot",
    });
    const number = await actAs.openPullRequest(world.emu, owner, repo, {
      head,
      base: "release",
      as: "hubot",
    });
    actAs.setStatus(world.emu, owner, repo, sha, { context: "queue-ci", state: "success" });
    return (await inspect.getPull(world.emu, owner, repo, number)).node_id;
  }

  it("refuses a PR already in the queue, as GitHub does", async () => {
    const id = await readyPull("queued");
    await world.as("mona").graphql(enqueue, { id });
    await expect(world.as("mona").graphql(enqueue, { id })).rejects.toThrow(
      "Pull request is already in the queue",
    );
  });

  it("takes a PR out of the queue when its head is pushed to, so it can be queued again", async () => {
    const id = await readyPull("moved");
    await world.as("mona").graphql(enqueue, { id });
    const sha = await actAs.commit(world.emu, owner, repo, "moved", { "moved.txt": "y\n" }, "moved again", {
      as: "hubot",
    });
    actAs.setStatus(world.emu, owner, repo, sha, { context: "queue-ci", state: "success" });
    await world.as("mona").graphql(enqueue, { id });
    const groups = await world.emu.repo(owner, repo).git.listRefs("refs/heads/gh-readonly-queue/");
    // Only the group of the new head: the first one left the queue with the push.
    expect(groups.map((group) => group.ref)).toEqual([`refs/heads/gh-readonly-queue/release/pr-1-${sha}`]);
  });

  it("queues a PR once when two enqueues for it arrive together", async () => {
    const id = await readyPull("twice");
    const results = await Promise.allSettled([
      world.as("mona").graphql(enqueue, { id }),
      world.as("hubot").graphql(enqueue, { id }),
    ]);
    expect(results.map((result) => result.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(
      String((results.find((result) => result.status === "rejected") as PromiseRejectedResult).reason),
    ).toContain("Pull request is already in the queue");
  });
});
