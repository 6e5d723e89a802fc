/**
 * Custom repository roles: `role_name` of
 * https://docs.github.com/en/rest/collaborators/collaborators#get-repository-permissions-for-a-user
 * names the assigned role "including custom roles", while `permission` maps maintain to write.
 * Ferry decides on the role's base, read from `user.permissions` (its highest grant).
 */
import { afterEach, describe, expect, it } from "vitest";
import { commandReactions, startWorld, type World } from "../support/app-e2e-world.js";
import { repos } from "../../packages/sandbox/src/github/index.js";

describe("Ferry and custom repository roles", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("lets a user whose custom role is based on Maintain /promote prod, and still refuses one based on Write", async () => {
    world = await startWorld({ ci: true });
    repos.setCustomRole(world.emu, "acme", "config", "mona", "release-manager", "maintain");
    repos.setCustomRole(world.emu, "acme", "config", "hubot", "deployer", "write");
    await world.push("1.8.0");
    const issue = await world.openIssue();
    const reactionsTo = (login: "mona" | "hubot") => commandReactions(world, issue, "/promote prod", login);
    expect(await reactionsTo("hubot")).toEqual(["-1", "eyes"]);
    expect(await reactionsTo("mona")).toEqual(["eyes", "rocket"]);
    expect((await world.pulls("open")).map((pull) => pull.head.ref)).toEqual(["ferry/prod"]);
  });
});
