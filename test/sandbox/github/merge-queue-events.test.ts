/**
 * The merge queue as GitHub runs it, beyond taking entries (graphql.test.ts):
 * - a PR entering and leaving the queue sends `pull_request` `enqueued` and `dequeued`, the latter
 *   with the removal `reason` (`CI_FAILURE` when the merge group's required checks fail; the
 *   `webhook-pull-request-dequeued` schema in @octokit/openapi-webhooks-types lists the reasons);
 *   the PR stays open and may be queued again;
 * - auto-merge armed on a PR whose checks have already passed is accepted but the PR is never
 *   queued, since GitHub queues armed PRs only on a later change
 *   (https://github.com/ClickHouse/ClickHouse/pull/98574, https://github.com/osac-project/osac/pull/924).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startReceiver, validateWebhook } from "../../support/github-contract-kit.js";
import { installApp, startWorld, type World } from "../../support/github-emulator-world.js";
import { actAs, inspect, repos } from "../../../packages/sandbox/src/github/index.js";

const owner = "acme";
const repo = "config";
const enqueue = `mutation($id: ID!) { enqueuePullRequest(input: { pullRequestId: $id }) { clientMutationId } }`;
const arm = `mutation($id: ID!) { enablePullRequestAutoMerge(input: { pullRequestId: $id, mergeMethod: SQUASH }) { clientMutationId } }`;

describe("a merge queue's entries", () => {
  let world: World;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeEach(async () => {
    world = await startWorld();
    receiver = await startReceiver("s3cret");
    await installApp(world, { webhookUrl: receiver.url, webhookSecret: "s3cret" });
    await actAs.createBranch(world.emu, owner, repo, "release", "main");
    repos.addRuleset(world.emu, owner, repo, {
      branches: ["release"],
      requiredChecks: ["ci"],
      mergeQueue: {},
    });
    actAs.setCi(world.emu, owner, repo, { context: "ci", conclusion: "success" });
  });
  afterEach(async () => {
    await world.emu.close();
    await receiver.close();
  });

  async function readyPull(head: string): Promise<{ number: number; id: string }> {
    await actAs.commit(world.emu, owner, repo, head, { [`${head}.txt`]: "x\n" }, head, { as: "hubot" });
    const number = await actAs.openPullRequest(world.emu, owner, repo, {
      head,
      base: "release",
      as: "hubot",
    });
    await world.emu.idle();
    return { number, id: (await inspect.getPull(world.emu, owner, repo, number)).node_id };
  }

  const hooks = (number: number) =>
    receiver.received.filter(
      (hook) =>
        hook.event === "pull_request" &&
        ["enqueued", "dequeued"].includes(String(hook.payload.action)) &&
        hook.payload.number === number,
    );

  it("sends enqueued, then dequeued with reason CI_FAILURE when the merge group fails; queued again, it merges", async () => {
    const pull = await readyPull("flaky");
    world.emu.faults.failMergeGroups({ count: 1 });
    await world.as("mona").graphql(enqueue, { id: pull.id });
    await world.emu.idle();
    expect(hooks(pull.number).map((hook) => [hook.payload.action, hook.payload.reason])).toEqual([
      ["enqueued", undefined],
      ["dequeued", "CI_FAILURE"],
    ]);
    expect(await inspect.getPull(world.emu, owner, repo, pull.number)).toMatchObject({
      state: "open",
      merged: false,
    });
    for (const hook of hooks(pull.number)) expect(validateWebhook(hook.event, hook.payload)).toEqual([]);
    await world.as("mona").graphql(enqueue, { id: pull.id });
    await world.emu.idle();
    expect((await inspect.getPull(world.emu, owner, repo, pull.number)).merged).toBe(true);
  });

  it("arms auto-merge on a PR whose checks have passed but never queues it; enqueuing it merges it", async () => {
    const pull = await readyPull("green");
    await world.as("mona").graphql(arm, { id: pull.id });
    // Later events (another check) do not queue it either.
    const head = (await inspect.getPull(world.emu, owner, repo, pull.number)).head.sha;
    actAs.setStatus(world.emu, owner, repo, head, { context: "lint", state: "success" });
    await world.emu.idle();
    const armed = await inspect.getPull(world.emu, owner, repo, pull.number);
    expect(armed.auto_merge?.merge_method).toBe("squash");
    expect(armed.state).toBe("open");
    expect(hooks(pull.number)).toEqual([]);
    await world.as("mona").graphql(enqueue, { id: pull.id });
    await world.emu.idle();
    expect((await inspect.getPull(world.emu, owner, repo, pull.number)).merged).toBe(true);
  });
});
