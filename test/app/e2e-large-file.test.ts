/**
 * End to end: one oversized YAML file under an environment's path is skipped with a reason, and
 * never stops the sync of the rest of the repository.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startWorld, type World } from "../support/app-e2e-world.js";
import { actAs } from "../../packages/sandbox/src/github/index.js";

/** A valid 6 MB YAML file: far over the 4 MiB limit, and over GitHub's 1 MB contents API limit. */
function bigYaml(): string {
  const line = `# ${"x".repeat(98)}\n`;
  return `kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: big\n${line.repeat(60_000)}`;
}

describe("an oversized file under an environment path (end to end)", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("a 6 MB YAML file under the staging path is skipped: the sync still opens the PR for the other files and the dashboard says which file and why", async () => {
    world = await startWorld({ ci: false });
    await actAs.commit(
      world.emu,
      "acme",
      "config",
      "main",
      { "overlays/staging/big.yaml": bigYaml() },
      "a large generated file",
      { as: "mona" },
    );
    await world.settle();
    await world.push("1.8.0");
    const pulls = await world.pulls("open");
    expect(pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);

    await world.server.scanNow();
    await world.settle();
    const { data: issues } = await world.as.mona.rest.issues.listForRepo({
      owner: "acme",
      repo: "config",
      state: "all",
    });
    const dashboard = issues.find((issue) => issue.title === "Ferry dashboard");
    expect(dashboard?.body).toMatch(/overlays\/staging\/big\.yaml.*skipped.*over the 4 MiB limit/);
  });
});
