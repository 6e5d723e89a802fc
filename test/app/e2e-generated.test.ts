/**
 * Generated config end to end (docs/config.md "Generated images and environments" and
 * "Grouping"): no image and no environment is written out. One image rule finds every image under
 * the registry's team namespaces in the environments' files and groups each by its team; one
 * environment set makes an environment per cluster folder. Each team's release gets its own PR,
 * and one team's failing check keeps only its own PR from merging.
 */
import { afterEach, describe, expect, it } from "vitest";
import { inspect } from "../../packages/sandbox/src/github/index.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { ciFailsOnly, startWorld, type World } from "../support/app-e2e-world.js";

const owner = "acme";
const repo = "config";
const APPS = { shop: "team-a", cart: "team-b", search: "team-c" } as const;

function files(host: string): Record<string, string> {
  const deployment = (team: string, app: string) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${app}\nspec:\n  template:\n    spec:\n      containers:\n        - name: ${app}\n          image: ${host}/${team}/${app}:1.0.0\n`;
  const out: Record<string, string> = {
    ".github/ferry.yml": `imageRules:
  - match: ${host}/*/*
    name: "{2}"
    exclude: [${host}/acme/*]
    template:
      group: "{1}"
      policy: { range: "^1.0.0" }
environmentSets:
  - over: clusters/*
    name: "{1}"
    template: { update: auto, merge: auto }
    overrides:
      prod: { from: staging, update: manual, merge: review }
`,
  };
  for (const [app, team] of Object.entries(APPS))
    for (const cluster of ["staging", "prod"]) out[`clusters/${cluster}/${app}.yaml`] = deployment(team, app);
  return out;
}

const stagingText = (world: World, app: string) =>
  inspect.readFile(world.emu, owner, repo, "main", `clusters/staging/${app}.yaml`);

describe("generated config (end to end)", { timeout: 600_000 }, () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("opens one PR per team for images no one wrote down, and a team's failing check blocks only its own", async () => {
    world = await startWorld({ ci: false, files });
    for (const [app, team] of Object.entries(APPS)) {
      await pushImage(world.registry.url, `${team}/${app}`, "1.0.0", { content: `${app}-1.0.0` });
      await pushImage(world.registry.url, `${team}/${app}`, "1.1.0", { content: `${app}-1.1.0` });
    }
    await world.server.scanNow();
    await world.settle();

    const open = await world.pulls("open");
    expect(open.map((pull) => [pull.head.ref, pull.title]).sort()).toEqual([
      ["ferry-group/staging/team-a", "Promote shop 1.1.0 to staging (team-a)"],
      ["ferry-group/staging/team-b", "Promote cart 1.1.0 to staging (team-b)"],
      ["ferry-group/staging/team-c", "Promote search 1.1.0 to staging (team-c)"],
    ]);
    // prod is manual and follows staging: nothing for it yet.
    await ciFailsOnly(world, open, "team-b");

    const after = Object.fromEntries((await world.pulls("all")).map((pull) => [pull.head.ref, pull]));
    expect(after["ferry-group/staging/team-a"]?.merged_at).not.toBeNull();
    expect(after["ferry-group/staging/team-c"]?.merged_at).not.toBeNull();
    expect(after["ferry-group/staging/team-b"]).toMatchObject({ state: "open", merged_at: null });
    expect(await stagingText(world, "shop")).toContain("team-a/shop:1.1.0");
    expect(await stagingText(world, "search")).toContain("team-c/search:1.1.0");
    expect(await stagingText(world, "cart")).toContain("team-b/cart:1.0.0");
    // The files of prod are untouched.
    expect(await inspect.readFile(world.emu, owner, repo, "main", "clusters/prod/shop.yaml")).toContain(
      "team-a/shop:1.0.0",
    );
  });
});
