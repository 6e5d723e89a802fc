/**
 * GitHub writes per promotion PR (docs/architecture.md "Request budget"), against the emulator: the
 * second PR of an environment, whose branch GitHub kept after the first merged, writes its tree
 * once, and a repository that does not allow auto-merge is not asked for it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { repos } from "../../packages/sandbox/src/github/index.js";
import { startWorld, type World } from "../support/app-e2e-world.js";

describe("GitHub writes per promotion PR (end to end)", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("the second staging PR: one tree for its branch, no auto-merge request where the repository does not allow it", async () => {
    world = await startWorld({ ci: true });
    repos.setRepoSettings(world.emu, "acme", "config", { allowAutoMerge: false });
    await world.push("1.8.0");
    const first = await world.pulls("all");
    expect(first.map((pull) => [pull.head.ref, pull.merged_at !== null])).toEqual([["ferry/staging", true]]);

    const mark = world.emu.requests().length;
    await world.push("1.9.0");
    const writes = world
      .appRequests(mark)
      .filter((request) => request.method !== "GET" && !request.path.includes("/access_tokens"))
      .map((request) => `${request.method} ${request.status} ${request.path.split("?")[0]}`);
    const pull = (await world.pulls("all")).find((each) => each.title === "Promote shop 1.9.0 to staging")!;
    expect(pull.merged_at).not.toBeNull();
    expect(writes).toEqual([
      // The branch is still there: the create is refused, and the commit redone on it keeps the tree.
      "POST 201 /repos/acme/config/git/trees",
      "POST 201 /repos/acme/config/git/commits",
      "POST 422 /repos/acme/config/git/refs",
      "POST 201 /repos/acme/config/git/commits",
      "PATCH 200 /repos/acme/config/git/refs/heads%2Fferry%2Fstaging",
      "POST 201 /repos/acme/config/pulls",
      `POST 200 /repos/acme/config/issues/${pull.number}/labels`,
      `PUT 200 /repos/acme/config/pulls/${pull.number}/merge`,
      // The merge's floors and history on the state ref, then the dashboard.
      "POST 201 /repos/acme/config/git/trees",
      "POST 201 /repos/acme/config/git/commits",
      "PATCH 200 /repos/acme/config/git/refs/ferry%2Fstate",
      expect.stringMatching(/^PATCH 200 \/repos\/acme\/config\/issues\/\d+$/),
    ]);
  });
});
