/**
 * A `merge: review` PR that Ferry rewrites keeps the approvals given to its earlier content unless
 * the base's protection dismisses stale approvals ("Dismiss stale pull request approvals when new
 * commits are pushed", `dismiss_stale_reviews`,
 * https://docs.github.com/en/rest/branches/branch-protection#update-branch-protection; off by
 * default). Ferry then says so on the PR; when the repository dismisses them it says nothing
 * (docs/reliability.md row 74).
 */
import { afterEach, describe, expect, it } from "vitest";
import { commandReactions, commentsOn, startWorld, type World } from "../support/app-e2e-world.js";
import { repos } from "../../packages/sandbox/src/github/index.js";

const STALE =
  /approval given to its earlier content still counts, because this repository does not dismiss stale approvals/;

async function prodPull(world: World) {
  const pulls = (await world.pulls("open")).filter((pull) => pull.head.ref === "ferry/prod");
  if (pulls.length !== 1) throw new Error(`expected one open ferry/prod PR, found ${pulls.length}`);
  return pulls[0]!;
}

/** Staging gets 1.8.0, prod's PR proposes it and hubot approves; then staging gets 1.9.0 and prod's PR is rewritten. */
async function approveThenRewrite(world: World): Promise<number> {
  await world.push("1.8.0");
  const issue = await world.openIssue();
  expect(await commandReactions(world, issue, "/promote prod")).toContain("rocket");
  const first = await prodPull(world);
  await world.as.hubot.rest.pulls.createReview({
    owner: "acme",
    repo: "config",
    pull_number: first.number,
    event: "APPROVE",
  });
  await world.settle();
  await world.push("1.9.0");
  expect(await commandReactions(world, issue, "/promote prod")).toContain("rocket");
  const rewritten = await prodPull(world);
  expect(rewritten.number).toBe(first.number);
  expect(rewritten.head.sha).not.toBe(first.head.sha);
  expect(rewritten.title).toContain("1.9.0");
  return first.number;
}

describe("approvals of a merge: review PR that Ferry rewrote", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("says on the PR that the approval of the earlier content still counts when the repository does not dismiss it", async () => {
    world = await startWorld({ ci: true });
    const number = await approveThenRewrite(world);
    const said = (await commentsOn(world, number)).filter((body) => STALE.test(body));
    expect(said).toHaveLength(1);
  });

  it("says nothing when the base's protection dismisses stale approvals", async () => {
    world = await startWorld({ ci: true });
    repos.protectBranch(world.emu, "acme", "config", "main", {
      requiredChecks: ["ci"],
      dismissStaleReviews: true,
    });
    const number = await approveThenRewrite(world);
    expect((await commentsOn(world, number)).filter((body) => STALE.test(body))).toEqual([]);
    const { data: reviews } = await world.as.mona.rest.pulls.listReviews({
      owner: "acme",
      repo: "config",
      pull_number: number,
    });
    expect(reviews.map((review) => review.state)).toEqual(["DISMISSED"]);
  });
});
