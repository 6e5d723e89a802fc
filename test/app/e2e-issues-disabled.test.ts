/**
 * A config repository with issues turned off (Settings → Features → Issues): github.com answers
 * `POST /repos/{o}/{r}/issues` with 410 "Issues are disabled for this repo"
 * (https://github.com/ossf/allstar/issues/64; `has_issues` on
 * https://docs.github.com/en/rest/repos/repos#get-a-repository). Pull request comments still
 * work. The dashboard issue is optional: the state ref is the truth.
 */
import { afterEach, describe, expect, it } from "vitest";
import { commandReactions, startWorld, type World } from "../support/app-e2e-world.js";
import { actAs, inspect, repos } from "../../packages/sandbox/src/github/index.js";

async function heldEnvironments(world: World): Promise<string[]> {
  const text = await inspect.readFile(world.emu, "acme", "config", "refs/ferry/state", "state.json");
  return Object.keys((JSON.parse(text ?? "{}") as { holds?: Record<string, unknown> }).holds ?? {});
}

describe("Ferry on a config repository with issues turned off", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("opens the promotion PR, answers /hold, /unhold and /rollback on PRs and opens the rollback PR, keeping the holds in the state ref without a dashboard", async () => {
    world = await startWorld({ ci: false });
    repos.setRepoSettings(world.emu, "acme", "config", { hasIssues: false });
    await world.push("1.8.0");
    const pulls = await world.pulls("open");
    expect(pulls.map((pull) => pull.head.ref)).toEqual(["ferry/staging"]);
    const pull = pulls[0]!.number;

    expect(await commandReactions(world, pull, "/hold staging")).toEqual(["eyes", "rocket"]);
    expect(await heldEnvironments(world)).toEqual(["staging"]);
    expect(await commandReactions(world, pull, "/unhold staging")).toEqual(["eyes", "rocket"]);
    expect(await heldEnvironments(world)).toEqual([]);

    // The promotion merges; /rollback, given on a person's open PR (there is no issue to use),
    // opens the rollback PR and holds staging.
    actAs.setStatus(world.emu, "acme", "config", pulls[0]!.head.sha, { context: "ci", state: "success" });
    await world.settle();
    expect((await world.pulls("all")).find((p) => p.number === pull)?.merged_at).not.toBeNull();
    await actAs.createBranch(world.emu, "acme", "config", "docs", "main", { as: "mona" });
    await actAs.commit(world.emu, "acme", "config", "docs", { "README.md": "docs\n" }, "docs", {
      as: "mona",
    });
    const docs = await actAs.openPullRequest(world.emu, "acme", "config", { head: "docs", as: "mona" });
    expect(await commandReactions(world, docs, "/rollback staging")).toEqual(["eyes", "rocket"]);
    const rollback = (await world.pulls("open")).filter((p) => p.head.ref === "ferry/staging");
    expect(rollback).toHaveLength(1);
    expect(rollback[0]!.title).toMatch(/1\.7\.0/);
    expect(await heldEnvironments(world)).toEqual(["staging"]);
    // No issue was ever written: the repository has none.
    const { data: issues } = await world.as.mona.rest.issues.listForRepo({
      owner: "acme",
      repo: "config",
      state: "all",
    });
    expect(issues.filter((issue) => !issue.pull_request)).toEqual([]);
  });
});
