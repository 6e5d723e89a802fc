/**
 * Moving images between promotion units end to end (docs/config.md "Grouping"): a Ferry PR whose
 * unit the config no longer has, or whose environment's images all moved to groups, is closed on
 * the next scan with a comment, never merged, and the unit the images moved to carries them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { commentsOn, startWorld, type World } from "../support/app-e2e-world.js";

const owner = "acme";
const repo = "config";

/** shop (in the world's kustomization) and cart (a file of its own), with the groups given. */
function files(groups: { shop?: string; cart?: string }) {
  return (host: string): Record<string, string> => {
    const image = (name: "shop" | "cart") =>
      `  ${name}: { repository: ${host}/acme/${name}${groups[name] ? `, group: ${groups[name]}` : ""}, policy: { range: "^1.0.0" } }`;
    return {
      ".github/ferry.yml": `images:\n${image("shop")}\n${image("cart")}\nenvironments:\n  staging:\n    paths: [overlays/staging]\n    update: auto\n    merge: auto\n`,
      "overlays/staging/cart.yaml": `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cart\nspec:\n  template:\n    spec:\n      containers:\n        - name: cart\n          image: ${host}/acme/cart:1.0.0\n`,
    };
  };
}

/** Replaces `.github/ferry.yml` on main with what `files` gives for these groups, as a person would. */
async function regroup(world: World, groups: { shop?: string; cart?: string }): Promise<void> {
  const host = new URL(world.registry.url).host;
  const { data } = await world.as.mona.rest.repos.getContent({ owner, repo, path: ".github/ferry.yml" });
  await world.as.mona.rest.repos.createOrUpdateFileContents({
    owner,
    repo,
    path: ".github/ferry.yml",
    message: "regroup",
    content: Buffer.from(files(groups)(host)[".github/ferry.yml"]!).toString("base64"),
    sha: (data as { sha: string }).sha,
  });
  await world.settle();
}

async function release(world: World): Promise<void> {
  await pushImage(world.registry.url, "acme/shop", "1.8.0", { content: "shop-new" });
  await pushImage(world.registry.url, "acme/cart", "1.1.0", { content: "cart-new" });
  await world.server.scanNow();
  await world.settle();
}

const byBranch = async (world: World) =>
  Object.fromEntries((await world.pulls("all")).map((pull) => [pull.head.ref, pull]));

describe("PRs of units the config no longer has (end to end)", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("a group left without images: its PR is closed on the next scan, and the group its image moved to carries it", async () => {
    // No CI reports: every PR stays open, so only the config change can end one.
    world = await startWorld({ ci: false, files: files({ shop: "team-a", cart: "team-b" }) });
    await release(world);
    const before = await byBranch(world);
    expect(Object.keys(before).sort()).toEqual(["ferry-group/staging/team-a", "ferry-group/staging/team-b"]);
    const teamB = before["ferry-group/staging/team-b"]!;

    await regroup(world, { shop: "team-a", cart: "team-a" });
    await world.server.scanNow();
    await world.settle();

    const after = await byBranch(world);
    expect(after["ferry-group/staging/team-b"]).toMatchObject({ state: "closed", merged_at: null });
    expect((await commentsOn(world, teamB.number)).at(-1)).toMatch(
      /^Closing: cart is no longer in this pull request's group/,
    );
    expect(after["ferry-group/staging/team-a"]).toMatchObject({
      state: "open",
      title: "Promote shop 1.8.0, cart 1.1.0 to staging (team-a)",
    });

    // The next scan lists no PR of a removed unit and asks nothing about team-b's branch.
    const mark = world.emu.requests().length;
    await world.server.scanNow();
    await world.settle();
    const asked = world.appRequests(mark).filter((request) => request.path.includes("team-b"));
    expect(asked).toEqual([]);
  });

  it("an environment whose images all moved to groups: its ferry/staging PR is closed on the next scan", async () => {
    world = await startWorld({ ci: false, files: files({}) });
    await release(world);
    const before = await byBranch(world);
    expect(Object.keys(before)).toEqual(["ferry/staging"]);
    expect(before["ferry/staging"]?.title).toBe("Promote shop 1.8.0, cart 1.1.0 to staging");

    await regroup(world, { shop: "team-a", cart: "team-b" });
    await world.server.scanNow();
    await world.settle();

    const after = await byBranch(world);
    expect(after["ferry/staging"]).toMatchObject({ state: "closed", merged_at: null });
    expect((await commentsOn(world, before["ferry/staging"]!.number)).at(-1)).toMatch(
      /^Closing: shop, cart are no longer in this pull request's group/,
    );
    expect(after["ferry-group/staging/team-a"]).toMatchObject({ state: "open" });
    expect(after["ferry-group/staging/team-b"]).toMatchObject({ state: "open" });
  });
});
