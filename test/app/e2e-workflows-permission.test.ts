import { actAs, inspect } from "../../packages/sandbox/src/github/index.js";
/**
 * A GitHub App without the `workflows` permission may not create or update `.github/workflows/*`,
 * and GitHub judges that by what a ref update changes, not by who wrote the commits: moving a PR
 * branch onto a base that changed a workflow is refused with "refusing to allow a GitHub App to
 * create or update workflow `.github/workflows/…` without `workflows` permission"
 * (https://github.com/chdsbd/kodiak/issues/853 through the update-branch API,
 * https://github.com/Mergifyio/mergify/issues/5055, https://github.com/wildfly/wildfly.org/issues/549).
 * Ferry writes through the Git Data API (tree, commit, then `PATCH /git/refs`), and its update
 * commit has the new base as first parent, so an update after a workflow change on the base is
 * such a move. Ferry does not ask for `workflows` (it would let it rewrite CI); it writes the
 * update on the branch's own head instead.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startWorld, type World } from "../support/app-e2e-world.js";

describe("updating a Ferry PR after the base changed a workflow", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("moves the staging PR to the newer tag without touching workflows, and it merges with the workflow intact", async () => {
    world = await startWorld({ ci: false });
    await world.push("1.8.0");
    const [opened] = await world.pulls("open");
    expect(opened?.title).toBe("Promote shop 1.8.0 to staging");
    const workflow = "on: push\njobs: {}\n";
    await actAs.commit(
      world.emu,
      "acme",
      "config",
      "main",
      { ".github/workflows/ci.yml": workflow },
      "Add CI",
      {
        as: "mona",
      },
    );
    await world.push("1.8.1");
    const [updated] = await world.pulls("open");
    expect(updated?.number).toBe(opened!.number);
    expect(updated?.title).toBe("Promote shop 1.8.1 to staging");
    const { data: files } = await world.as.mona.rest.pulls.listFiles({
      owner: "acme",
      repo: "config",
      pull_number: updated!.number,
    });
    expect(files.map((file) => file.filename)).toEqual(["overlays/staging/kustomization.yaml"]);
    expect(world.emu.forcedRefUpdates).toEqual([]);
    actAs.setStatus(world.emu, "acme", "config", updated!.head.sha, { context: "ci", state: "success" });
    await world.settle();
    expect(
      (await world.pulls("all")).find((pull) => pull.number === opened!.number)?.merged_at,
    ).not.toBeNull();
    expect(
      await inspect.readFile(world.emu, "acme", "config", "main", "overlays/staging/kustomization.yaml"),
    ).toContain('newTag: "1.8.1"');
    expect(await inspect.readFile(world.emu, "acme", "config", "main", ".github/workflows/ci.yml")).toBe(
      workflow,
    );
  });
});
