/**
 * "Dismiss stale pull request approvals when new commits are pushed"
 * (https://docs.github.com/en/rest/branches/branch-protection#update-branch-protection,
 * `dismiss_stale_reviews`): a push to the head turns the approvals `DISMISSED`, and each sends
 * `pull_request_review` with action `dismissed`
 * (https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request_review), in the
 * shape of GitHub's webhook schema. Without the setting, nothing is dismissed and nothing sent.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startReceiver, validateWebhook } from "../../support/github-contract-kit.js";
import { installApp, startWorld, type World } from "../../support/github-emulator-world.js";
import { actAs, repos } from "../../../packages/sandbox/src/github/index.js";

const owner = "acme";
const repo = "config";

describe("stale approvals on a push", () => {
  let world: World;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeEach(async () => {
    world = await startWorld();
    receiver = await startReceiver("s3cret");
    await installApp(world, { webhookUrl: receiver.url, webhookSecret: "s3cret" });
  });
  afterEach(async () => {
    await world.emu.close();
    await receiver.close();
  });

  async function approvedThenPushed(): Promise<number> {
    await actAs.commit(world.emu, owner, repo, "feature", { "f.txt": "1\n" }, "f", { as: "hubot" });
    const number = await actAs.openPullRequest(world.emu, owner, repo, { head: "feature", as: "hubot" });
    await actAs.review(world.emu, owner, repo, number, { as: "mona", event: "APPROVE" });
    await actAs.commit(world.emu, owner, repo, "feature", { "f.txt": "2\n" }, "f2", { as: "hubot" });
    await world.emu.idle();
    return number;
  }

  const dismissals = () =>
    receiver.received.filter(
      (hook) => hook.event === "pull_request_review" && hook.payload.action === "dismissed",
    );

  it("dismisses the approval and sends pull_request_review dismissed when the base dismisses stale reviews", async () => {
    repos.protectBranch(world.emu, owner, repo, "main", { requiredApprovals: 1, dismissStaleReviews: true });
    const number = await approvedThenPushed();
    const { data: reviews } = await world
      .as("mona")
      .rest.pulls.listReviews({ owner, repo, pull_number: number });
    expect(reviews.map((review) => review.state)).toEqual(["DISMISSED"]);
    const [hook, ...more] = dismissals();
    expect(more).toEqual([]);
    expect(hook?.payload).toMatchObject({
      review: { id: reviews[0]!.id, state: "dismissed", user: { login: "mona" } },
      pull_request: { number },
      sender: { login: "hubot" },
    });
    expect(validateWebhook(hook!.event, hook!.payload)).toEqual([]);
  });

  it("keeps the approval and sends nothing when the base does not", async () => {
    repos.protectBranch(world.emu, owner, repo, "main", { requiredApprovals: 1 });
    const number = await approvedThenPushed();
    const { data: reviews } = await world
      .as("mona")
      .rest.pulls.listReviews({ owner, repo, pull_number: number });
    expect(reviews.map((review) => review.state)).toEqual(["APPROVED"]);
    expect(dismissals()).toEqual([]);
  });
});
