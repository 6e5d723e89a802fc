/**
 * End to end: `/rollback` goes to the version before the current one in the environment's history
 * of promotions, skipping versions that were themselves rolled back.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startWorld, type World } from "../support/app-e2e-world.js";
import { inspect } from "../../packages/sandbox/src/github/index.js";

const STAGING = "overlays/staging/kustomization.yaml";

describe("/rollback walks the environment's history (end to end)", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  async function rollback(issue: number): Promise<void> {
    await world.as.mona.rest.issues.createComment({
      owner: "acme",
      repo: "config",
      issue_number: issue,
      body: "/rollback staging",
    });
    await world.settle();
  }

  const stagingTag = async (): Promise<string | undefined> =>
    /newTag: "([^"]+)"/.exec(
      (await inspect.readFile(world.emu, "acme", "config", "main", STAGING)) ?? "",
    )?.[1];

  it("after 1.7 → 1.8 → 1.9, rolls back to 1.8, then to 1.7 (not 1.9), then says there is no older version and opens no PR", async () => {
    world = await startWorld({ ci: true });
    await world.push("1.8.0");
    await world.push("1.9.0");
    expect(await stagingTag()).toBe("1.9.0");
    const issue = await world.openIssue();

    await rollback(issue);
    expect(await stagingTag()).toBe("1.8.0");
    await rollback(issue);
    expect(await stagingTag()).toBe("1.7.0");

    const pullsBefore = (await world.pulls()).length;
    await rollback(issue);
    expect(await stagingTag()).toBe("1.7.0");
    expect(await world.pulls()).toHaveLength(pullsBefore);
    const { data: comments } = await world.as.mona.rest.issues.listComments({
      owner: "acme",
      repo: "config",
      issue_number: issue,
    });
    expect(comments.at(-1)?.body).toMatch(
      /^@mona no version of shop older than 1\.7\.0 is recorded for staging/,
    );
  });
});
