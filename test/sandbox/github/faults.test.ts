import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { expectStatus, startWorld, type World } from "../../support/github-emulator-world.js";
import { actAs, inspect } from "../../../packages/sandbox/src/github/index.js";

const owner = "acme";
const repo = "config";

describe("faults on demand", () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterEach(() => {
    world.emu.faults.clear();
  });
  afterAll(async () => {
    await world.emu.close();
  });

  it("answers a primary rate limit with remaining 0 and the reset time, then recovers", async () => {
    world.emu.faults.rateLimit({ kind: "primary", count: 1, retryAfterSeconds: 30 });
    const limited = await expectStatus(world.as("hubot").rest.repos.get({ owner, repo }), 403);
    expect(limited.headers["x-ratelimit-remaining"]).toBe("0");
    const reset = Number(limited.headers["x-ratelimit-reset"]);
    expect(reset - Date.now() / 1000).toBeGreaterThan(25);
    expect(limited.message).toMatch(/API rate limit exceeded/);
    await world.as("hubot").rest.repos.get({ owner, repo });
  });

  it("answers a secondary rate limit with 403, retry-after and GitHub's message", async () => {
    world.emu.faults.rateLimit({ kind: "secondary", count: 2, retryAfterSeconds: 7 });
    for (let i = 0; i < 2; i++) {
      const limited = await expectStatus(world.as("hubot").rest.repos.get({ owner, repo }), 403);
      expect(limited.headers["retry-after"]).toBe("7");
      expect(limited.message).toMatch(/^You have exceeded a secondary rate limit/);
    }
    await world.as("hubot").rest.repos.get({ owner, repo });
  });

  it("fails only the matching route with the requested server error", async () => {
    world.emu.faults.serverError({ status: 502, count: 1, route: "POST /repos/acme/config/git/blobs" });
    await world.as("hubot").rest.repos.get({ owner, repo });
    await expectStatus(world.as("hubot").rest.git.createBlob({ owner, repo, content: "x" }), 502);
    await world.as("hubot").rest.git.createBlob({ owner, repo, content: "x" });
  });

  it("misses a fresh ref and a fresh PR once (eventual consistency), then finds them", async () => {
    world.emu.faults.eventualConsistency({ count: 1 });
    const main = (await inspect.branchSha(world.emu, owner, repo, "main"))!;
    await world.as("hubot").rest.git.createRef({ owner, repo, ref: "refs/heads/fresh", sha: main });
    await expectStatus(world.as("hubot").rest.git.getRef({ owner, repo, ref: "heads/fresh" }), 404);
    expect(
      (await world.as("hubot").rest.git.getRef({ owner, repo, ref: "heads/fresh" })).data.object.sha,
    ).toBe(main);
    await actAs.commit(world.emu, owner, repo, "fresh", { "f.txt": "f\n" }, "f", { as: "hubot" });
    const { data: pr } = await world
      .as("hubot")
      .rest.pulls.create({ owner, repo, head: "fresh", base: "main", title: "fresh" });
    await expectStatus(world.as("hubot").rest.pulls.get({ owner, repo, pull_number: pr.number }), 404);
    await world.as("hubot").rest.pulls.get({ owner, repo, pull_number: pr.number });
  });

  it("lets a rival writer win the race for a ref, so a fast-forward update becomes non-fast-forward", async () => {
    const octokit = world.as("hubot");
    const base = await actAs.commit(world.emu, owner, repo, "raced", { "r.txt": "1\n" }, "r", {
      as: "hubot",
    });
    const { data: tip } = await octokit.rest.git.getCommit({ owner, repo, commit_sha: base });
    const { data: next } = await octokit.rest.git.createCommit({
      owner,
      repo,
      message: "next",
      tree: tip.tree.sha,
      parents: [base],
    });
    world.emu.faults.refRace({ ref: "heads/raced" });
    const lost = await expectStatus(
      octokit.rest.git.updateRef({ owner, repo, ref: "heads/raced", sha: next.sha }),
      422,
    );
    expect(lost.message).toBe("Update is not a fast forward");
    expect(await inspect.branchSha(world.emu, owner, repo, "raced")).not.toBe(next.sha);
  });

  it("keeps a record of every request with its status and actor, resettable", async () => {
    world.emu.resetRequests();
    await world.as("eve").rest.repos.get({ owner, repo });
    await expectStatus(world.as("eve").rest.repos.get({ owner, repo: "nope" }), 404);
    expect(world.emu.requests()).toEqual([
      { method: "GET", path: "/repos/acme/config", status: 200, actor: "eve" },
      { method: "GET", path: "/repos/acme/nope", status: 404, actor: "eve" },
    ]);
  });
});

describe("faults that shape pull request merges", () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(async () => {
    await world.emu.close();
  });

  it("answers 405 'Base branch was modified' when a rival moves the base during the merge", async () => {
    await actAs.commit(world.emu, owner, repo, "raced-merge", { "m.txt": "1\n" }, "m", { as: "hubot" });
    const number = await actAs.openPullRequest(world.emu, owner, repo, { head: "raced-merge", as: "hubot" });
    world.emu.faults.refRace({ ref: "heads/main" });
    const lost = await expectStatus(
      world.as("hubot").rest.pulls.merge({ owner, repo, pull_number: number }),
      405,
    );
    expect(lost.message).toBe("Base branch was modified. Review and try the merge again.");
    await world.as("hubot").rest.pulls.merge({ owner, repo, pull_number: number });
  });

  it("shows mergeability as still being computed (null, unknown) for the next read", async () => {
    await actAs.commit(world.emu, owner, repo, "pending", { "p.txt": "1\n" }, "p", { as: "hubot" });
    const number = await actAs.openPullRequest(world.emu, owner, repo, { head: "pending", as: "hubot" });
    world.emu.faults.mergeabilityPending({ count: 1 });
    const first = (await world.as("hubot").rest.pulls.get({ owner, repo, pull_number: number })).data;
    const second = (await world.as("hubot").rest.pulls.get({ owner, repo, pull_number: number })).data;
    expect([first.mergeable, first.mergeable_state]).toEqual([null, "unknown"]);
    expect([second.mergeable, second.mergeable_state]).toEqual([true, "clean"]);
  });

  it("can send a secondary rate limit without retry-after", async () => {
    world.emu.faults.rateLimit({ kind: "secondary", retryAfterSeconds: null });
    const limited = await expectStatus(world.as("hubot").rest.repos.get({ owner, repo }), 403);
    expect(limited.headers["retry-after"]).toBeUndefined();
    expect(limited.message).toMatch(/secondary rate limit/);
  });
});
