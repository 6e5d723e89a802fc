import { inspect } from "../../packages/sandbox/src/github/index.js";
/**
 * More than 100 `ferry`-labelled issues and PRs. `GET /repos/{o}/{r}/issues` lists pull requests
 * too ("GitHub's REST API considers every pull request an issue",
 * https://docs.github.com/en/rest/issues/issues#list-repository-issues), newest first, at most 100
 * a page: once Ferry's PRs pushed the dashboard off the first page, a lookup that read one page
 * found none and opened a second dashboard. The dashboard's number is kept in the state ref and
 * checked on read; the search that remains reads every page, whatever their order.
 */
import { afterEach, describe, expect, it } from "vitest";
import { commandReactions, dashboards, startWorld, type World } from "../support/app-e2e-world.js";

/** 105 newer `ferry`-labelled items: the dashboard is no longer on the first page of 100. */
async function bury(world: World): Promise<void> {
  for (let i = 0; i < 105; i++)
    await world.as.mona.rest.issues.create({
      owner: "acme",
      repo: "config",
      title: `Release note ${i}`,
      labels: ["ferry"],
    });
}

async function stateFile(world: World): Promise<{ holds: object; dashboard?: number }> {
  const text = await inspect.readFile(world.emu, "acme", "config", "refs/ferry/state", "state.json");
  return JSON.parse(text ?? "{}") as { holds: object; dashboard?: number };
}

describe("the dashboard after more than 100 ferry-labelled issues and PRs", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("keeps one dashboard: its number is in the state ref and the next /unhold updates it", async () => {
    world = await startWorld({ ci: false });
    const issue = await world.openIssue();
    expect(await commandReactions(world, issue, "/hold prod")).toEqual(["eyes", "rocket"]);
    const [dashboard] = await dashboards(world);
    expect(dashboard).toBeDefined();
    expect((await stateFile(world)).dashboard).toBe(dashboard!.number);
    await bury(world);
    expect(await commandReactions(world, issue, "/unhold prod")).toEqual(["eyes", "rocket"]);
    const after = await dashboards(world);
    expect(after.map((found) => found.number)).toEqual([dashboard!.number]);
    expect(after[0]!.body).not.toContain("on hold");
  });

  it("finds the dashboard by searching every page when the state ref does not name it (an older installation)", async () => {
    world = await startWorld({ ci: false });
    const issue = await world.openIssue();
    expect(await commandReactions(world, issue, "/hold prod")).toEqual(["eyes", "rocket"]);
    const [dashboard] = await dashboards(world);
    // The state as an installation from before the number was kept would have written it.
    const state = await stateFile(world);
    delete state.dashboard;
    const { data: head } = await world.as.mona.rest.git.getRef({
      owner: "acme",
      repo: "config",
      ref: "ferry/state",
    });
    const { data: tree } = await world.as.mona.rest.git.createTree({
      owner: "acme",
      repo: "config",
      tree: [
        { path: "state.json", mode: "100644", type: "blob", content: `${JSON.stringify(state, null, 2)}\n` },
      ],
    });
    const { data: commit } = await world.as.mona.rest.git.createCommit({
      owner: "acme",
      repo: "config",
      message: "Ferry state: held prod\n",
      tree: tree.sha,
      parents: [head.object.sha],
    });
    await world.as.mona.rest.git.updateRef({
      owner: "acme",
      repo: "config",
      ref: "ferry/state",
      sha: commit.sha,
    });
    await bury(world);
    expect(await commandReactions(world, issue, "/unhold prod")).toEqual(["eyes", "rocket"]);
    const after = await dashboards(world);
    expect(after.map((found) => found.number)).toEqual([dashboard!.number]);
    expect(after[0]!.body).not.toContain("on hold");
    expect((await stateFile(world)).dashboard).toBe(dashboard!.number);
  });
});
