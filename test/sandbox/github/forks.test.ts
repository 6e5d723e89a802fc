/**
 * Forks as GitHub has them (https://docs.github.com/en/rest/repos/forks#create-a-fork, and
 * https://docs.github.com/en/rest/pulls/pulls#create-a-pull-request: `head` is `username:branch`
 * "for cross-repository pull requests in the same network"): the fork copies the branches, a PR
 * from it names the fork as `head.repo`, the base repository serves its head commits (as
 * `refs/pull/<n>/head`) while no branch of the base holds them, and a push to the fork's branch
 * synchronizes the PR in the base, delivered to the base's installations.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectStatus, installApp, startWorld, type World } from "../../support/github-emulator-world.js";
import { actAs, repos } from "../../../packages/sandbox/src/github/index.js";

const owner = "acme";
const repo = "config";

describe("forks and pull requests from them", () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.emu.close();
  });

  it("forks a repository a user can read into theirs (202), once, with parent and source", async () => {
    const eve = world.as("eve");
    const { status, data } = await eve.rest.repos.createFork({ owner, repo });
    expect(status).toBe(202);
    expect(data).toMatchObject({ full_name: "eve/config", fork: true, private: false });
    const again = await eve.rest.repos.createFork({ owner, repo });
    expect(again.data.id).toBe(data.id);
    const { data: fork } = await eve.rest.repos.get({ owner: "eve", repo: "config" });
    expect(fork.parent?.full_name).toBe("acme/config");
    expect(fork.source?.full_name).toBe("acme/config");
    const main = (await eve.rest.repos.getBranch({ owner, repo, branch: "main" })).data.commit.sha;
    expect(
      (await eve.rest.repos.getBranch({ owner: "eve", repo: "config", branch: "main" })).data.commit.sha,
    ).toBe(main);
    const { data: forks } = await eve.rest.repos.listForks({ owner, repo });
    expect(forks.map((f) => f.full_name)).toEqual(["eve/config"]);
    expect((await eve.rest.repos.get({ owner, repo })).data.fork).toBe(false);
  });

  it("refuses a fork to an installation token and to a user who cannot read a private repository", async () => {
    const app = await installApp(world);
    await expectStatus(app.installation.rest.repos.createFork({ owner, repo }), 403);
    await repos.createRepo(world.emu, owner, "secret", { private: true, files: { "a.txt": "a\n" } });
    await expectStatus(world.as("eve").rest.repos.createFork({ owner, repo: "secret" }), 404);
  });

  it("opens a PR from the fork's branch: head.repo is the fork, the base serves its commits on no branch, a push to the fork synchronizes it", async () => {
    const app = await installApp(world, { webhookUrl: "http://127.0.0.1:1/hooks", webhookSecret: "x" });
    const eve = world.as("eve");
    await eve.rest.repos.createFork({ owner, repo });
    const first = await actAs.commit(world.emu, "eve", "config", "fix", { "fix.txt": "1\n" }, "fix", {
      as: "eve",
    });
    const { data: pull } = await eve.rest.pulls.create({
      owner,
      repo,
      head: "eve:fix",
      base: "main",
      title: "Fix",
    });
    expect(pull.head).toMatchObject({
      label: "eve:fix",
      ref: "fix",
      sha: first,
      repo: { full_name: "eve/config" },
    });
    expect(pull.base.repo.full_name).toBe("acme/config");
    // Served by the base at the head SHA, while the base has no such branch.
    const hubot = world.as("hubot");
    expect((await hubot.rest.git.getCommit({ owner, repo, commit_sha: first })).data.sha).toBe(first);
    const file = await hubot.rest.repos.getContent({ owner, repo, path: "fix.txt", ref: first });
    expect(Buffer.from((file.data as { content: string }).content, "base64").toString()).toBe("1\n");
    await expectStatus(hubot.rest.repos.getBranch({ owner, repo, branch: "fix" }), 404);
    expect(
      (await hubot.rest.pulls.listFiles({ owner, repo, pull_number: pull.number })).data.map(
        (f) => f.filename,
      ),
    ).toEqual(["fix.txt"]);
    expect((await hubot.rest.pulls.list({ owner, repo, head: "eve:fix" })).data.map((p) => p.number)).toEqual(
      [pull.number],
    );
    expect((await hubot.rest.pulls.list({ owner, repo, head: "acme:fix" })).data).toEqual([]);
    // A second PR for the same fork branch is refused; a branch of the base with the same name is another head.
    await expectStatus(
      eve.rest.pulls.create({ owner, repo, head: "eve:fix", base: "main", title: "Again" }),
      422,
    );
    // Nobody's fork, or a user without one: the head is invalid.
    await expectStatus(
      eve.rest.pulls.create({ owner, repo, head: "mona:fix", base: "main", title: "No" }),
      422,
    );

    const second = await actAs.commit(world.emu, "eve", "config", "fix", { "fix.txt": "2\n" }, "fix 2", {
      as: "eve",
    });
    await world.emu.idle();
    expect((await hubot.rest.pulls.get({ owner, repo, pull_number: pull.number })).data.head.sha).toBe(
      second,
    );
    expect((await hubot.rest.git.getCommit({ owner, repo, commit_sha: second })).data.sha).toBe(second);
    const synchronize = world.emu.webhooks
      .deliveries()
      .filter((d) => d.appId === app.appId && d.event === "pull_request" && d.action === "synchronize");
    expect(synchronize).toHaveLength(1);
    expect(synchronize[0]!.payload).toMatchObject({
      after: second,
      repository: { full_name: "acme/config" },
      pull_request: { head: { sha: second, repo: { full_name: "eve/config" } } },
    });
    // The fork's own pushes reach no installation of acme's.
    expect(
      world.emu.webhooks
        .deliveries()
        .filter(
          (d) =>
            d.appId === app.appId && d.event === "push" && JSON.stringify(d.payload).includes("eve/config"),
        ),
    ).toEqual([]);

    // Merged by a maintainer: the fork's commit lands on the base; the fork's branch is left alone.
    const { data: merged } = await world
      .as("mona")
      .rest.pulls.merge({ owner, repo, pull_number: pull.number });
    expect(merged.merged).toBe(true);
    const { data: main } = await hubot.rest.repos.getContent({ owner, repo, path: "fix.txt" });
    expect(Buffer.from((main as { content: string }).content, "base64").toString()).toBe("2\n");
    expect(
      (await eve.rest.repos.getBranch({ owner: "eve", repo: "config", branch: "fix" })).data.commit.sha,
    ).toBe(second);
  });
});
