/**
 * Who may promote what, end to end on the GitHub emulator (docs/config.md "Who may promote what"):
 * two teams, each owning an app of one config repo — team A names shop in its `promoters`, team B
 * owns cart's files in CODEOWNERS. Membership is asked live through
 * https://docs.github.com/en/rest/teams/members#get-team-membership-for-a-user (200 with
 * `state: active` for a member, 404 otherwise). A PR granting team A cart says so on `ferry/config`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { commandReactions, commentsOn, startWorld, type World } from "../support/app-e2e-world.js";
import { shopOverlay } from "../support/app-fakes.js";
import { inspect, repos } from "../../packages/sandbox/src/github/index.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";

const CODEOWNERS = ".github/CODEOWNERS";

function config(host: string): string {
  return `images:
  shop:
    repository: ${host}/acme/shop
    policy: { range: "^1.0.0" }
    promoters: { teams: [acme/team-a] }
  cart:
    repository: ${host}/acme/cart
    policy: { range: "^1.0.0" }
    promoters: { codeowners: true }
environments:
  prod:
    paths: [overlays/prod]
    update: manual
    merge: review
    promoters: { permission: write }
`;
}

describe("a team promotes its own app and not another's (end to end)", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("refuses team A's member /promote prod for team B's app with a clear reply, allows A's own, and lists a grant on ferry/config", async () => {
    world = await startWorld({
      ci: true,
      files: (host) => ({
        ".github/ferry.yml": config(host),
        "overlays/prod/cart/kustomization.yaml": shopOverlay(host, "1.7.0").replace("acme/shop", "acme/cart"),
        [CODEOWNERS]: "/overlays/prod/cart/ @acme/team-b\n",
      }),
    });
    repos.createTeam(world.emu, "acme", "team-a", ["hubot"]);
    repos.createTeam(world.emu, "acme", "team-b", ["eve"]);
    repos.setCollaborator(world.emu, "acme", "config", "eve", "write");
    for (const tag of ["1.7.0", "1.8.0"])
      await pushImage(world.registry.url, "acme/cart", tag, { content: `cart ${tag}` });
    await world.push("1.8.0");
    const issue = await world.openIssue();

    // hubot (team A, write) may not touch cart, team B's by CODEOWNERS: 👎 and a reply naming who may.
    expect(await commandReactions(world, issue, "/promote prod cart@1.8.0", "hubot")).toEqual(["-1", "eyes"]);
    expect((await commentsOn(world, issue)).at(-1)).toBe(
      "@hubot you may not promote cart in prod: only members of @acme/team-b or a repository admin may",
    );
    expect(await world.pulls("open")).toEqual([]);
    // Nor /promote prod as a whole, which would change cart too.
    expect(await commandReactions(world, issue, "/promote prod", "hubot")).toEqual(["-1", "eyes"]);
    expect(await world.pulls("open")).toEqual([]);

    // Their own app goes through.
    expect(await commandReactions(world, issue, "/promote prod shop@1.8.0", "hubot")).toEqual([
      "eyes",
      "rocket",
    ]);
    const [pull] = await world.pulls("open");
    expect(pull?.head.ref).toBe("ferry/prod");
    expect(pull?.body).toContain("1.8.0");
    // And team B's member promotes cart, but not shop.
    expect(await commandReactions(world, issue, "/promote prod shop@1.8.0", "eve")).toEqual(["-1", "eyes"]);
    expect(await commandReactions(world, issue, "/promote prod cart@1.8.0", "eve")).toEqual([
      "eyes",
      "rocket",
    ]);

    // A PR in which team A grants itself cart: the rules in force stay the default branch's, and
    // the ferry/config check on the PR says who gains and who loses.
    const main = (await inspect.branchSha(world.emu, "acme", "config", "main"))!;
    const repo = { owner: "acme", repo: "config" };
    await world.as.hubot.rest.git.createRef({ ...repo, ref: "refs/heads/grab", sha: main });
    const { data: file } = await world.as.hubot.rest.repos.getContent({
      ...repo,
      path: CODEOWNERS,
      ref: "grab",
    });
    const { data: commit } = await world.as.hubot.rest.repos.createOrUpdateFileContents({
      ...repo,
      path: CODEOWNERS,
      branch: "grab",
      message: "cart is ours too",
      sha: (file as { sha: string }).sha,
      content: Buffer.from("/overlays/prod/cart/ @acme/team-b @acme/team-a\n").toString("base64"),
    });
    await world.as.hubot.rest.pulls.create({
      ...repo,
      head: "grab",
      base: "main",
      title: "cart is ours too",
    });
    await world.settle();
    const { data: checks } = await world.as.mona.rest.checks.listForRef({ ...repo, ref: commit.commit.sha! });
    const check = checks.check_runs.find((run) => run.name === "ferry/config");
    expect(check?.output.title).toContain("who may promote changes");
    expect(check?.output.summary).toContain("- prod / cart: members of @acme/team-a may now promote");
    expect(await commandReactions(world, issue, "/promote prod cart@1.8.0", "hubot")).toEqual(["-1", "eyes"]);
  });
});
