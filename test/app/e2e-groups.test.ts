/**
 * PR grouping end to end (docs/config.md "Grouping"): three teams' groups in staging
 * (`merge: auto`), each with its own PR on `ferry-group/staging/<group>`. One group failing (its
 * branch write refused by a ruleset, or its PR's required check failing) never stops the other
 * two from opening and merging in the same scan.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Octokit } from "@octokit/rest";
import { accounts, inspect, repos } from "../../packages/sandbox/src/github/index.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { ciFailsOnly, commandReply, dashboards, startWorld, type World } from "../support/app-e2e-world.js";

const owner = "acme";
const repo = "config";
const TEAMS = { shop: "team-a", cart: "team-b", search: "team-c" } as const;

function files(host: string): Record<string, string> {
  const images = Object.entries(TEAMS)
    .map(
      ([image, group]) =>
        `  ${image}: { repository: ${host}/acme/${image}, group: ${group}, policy: { range: "^1.0.0" } }`,
    )
    .join("\n");
  const deployment = (image: string, tag: string) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ${image}\nspec:\n  template:\n    spec:\n      containers:\n        - name: ${image}\n          image: ${host}/acme/${image}:${tag}\n`;
  return {
    ".github/ferry.yml": `images:\n${images}\nenvironments:\n  staging:\n    paths: [overlays/staging]\n    update: auto\n    merge: auto\n  prod:\n    paths: [overlays/prod]\n    from: staging\n    update: manual\n    merge: review\n`,
    // shop stays in the kustomization the world starts with; cart and search get a file each.
    "overlays/staging/cart.yaml": deployment("cart", "1.0.0"),
    "overlays/staging/search.yaml": deployment("search", "1.0.0"),
    "overlays/prod/cart.yaml": deployment("cart", "1.0.0"),
    "overlays/prod/search.yaml": deployment("search", "1.0.0"),
  };
}

/** Pushes a new version of each of the three images, then runs one scan. */
async function releaseAll(world: World): Promise<void> {
  for (const image of ["shop", "cart", "search"])
    await pushImage(world.registry.url, `acme/${image}`, image === "shop" ? "1.8.0" : "1.1.0", {
      content: `${image}-new`,
    });
  await world.server.scanNow();
  await world.settle();
}

const stagingText = (world: World, path: string) =>
  inspect.readFile(world.emu, owner, repo, "main", `overlays/staging/${path}`);

describe("a PR per group (end to end)", { timeout: 600_000 }, () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("opens and merges two groups' PRs in the scan where a ruleset refuses the third group's branch", async () => {
    world = await startWorld({ ci: true, files });
    const admin = accounts.createUser(world.emu, "octo-admin");
    repos.setCollaborator(world.emu, owner, repo, admin.login, "admin");
    const octo = new Octokit({ baseUrl: world.emu.apiUrl, auth: admin.token, request: { retries: 0 } });
    await octo.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "team-b is frozen",
      enforcement: "active",
      conditions: { ref_name: { include: ["refs/heads/ferry-group/staging/team-b"], exclude: [] } },
      rules: [{ type: "creation" }],
    });
    await releaseAll(world);

    const pulls = await world.pulls("all");
    const byBranch = Object.fromEntries(pulls.map((pull) => [pull.head.ref, pull]));
    expect(Object.keys(byBranch).sort()).toEqual([
      "ferry-group/staging/team-a",
      "ferry-group/staging/team-c",
    ]);
    expect(byBranch["ferry-group/staging/team-a"]?.title).toBe("Promote shop 1.8.0 to staging (team-a)");
    expect(byBranch["ferry-group/staging/team-c"]?.title).toBe("Promote search 1.1.0 to staging (team-c)");
    for (const pull of pulls) expect(pull.merged_at, pull.head.ref).not.toBeNull();
    expect(await stagingText(world, "kustomization.yaml")).toContain('newTag: "1.8.0"');
    expect(await stagingText(world, "search.yaml")).toContain("acme/search:1.1.0");
    // team-b's image is where it was, and the dashboard says why, in the rule's words.
    expect(await stagingText(world, "cart.yaml")).toContain("acme/cart:1.0.0");
    const [dashboard] = await dashboards(world);
    expect(dashboard?.body).toContain("refused Ferry's write to ferry-group/staging/team-b");
    const { data: labels } = await world.as.mona.rest.issues.listLabelsOnIssue({
      owner,
      repo,
      issue_number: byBranch["ferry-group/staging/team-a"]!.number,
    });
    expect(labels.map((label) => label.name).sort()).toEqual(["env:staging", "ferry", "group:team-a"]);
  });

  it("merges two groups' PRs while the third's required check fails, and /hold on that PR holds only its group", async () => {
    world = await startWorld({ ci: false, files });
    await releaseAll(world);
    const open = await world.pulls("open");
    expect(open.map((pull) => pull.head.ref).sort()).toEqual([
      "ferry-group/staging/team-a",
      "ferry-group/staging/team-b",
      "ferry-group/staging/team-c",
    ]);
    await ciFailsOnly(world, open, "team-b");
    const after = Object.fromEntries((await world.pulls("all")).map((pull) => [pull.head.ref, pull]));
    expect(after["ferry-group/staging/team-a"]?.merged_at).not.toBeNull();
    expect(after["ferry-group/staging/team-c"]?.merged_at).not.toBeNull();
    expect(after["ferry-group/staging/team-b"]).toMatchObject({ state: "open", merged_at: null });
    expect(await stagingText(world, "cart.yaml")).toContain("acme/cart:1.0.0");
    expect(await stagingText(world, "search.yaml")).toContain("acme/search:1.1.0");

    // On team-b's PR, /hold holds team-b; the other groups keep moving.
    const held = after["ferry-group/staging/team-b"]!.number;
    expect(await commandReply(world, held, "/hold staging")).toMatch(/staging \(group team-b\) is on hold/);
    const state = JSON.parse(
      (await inspect.readFile(world.emu, owner, repo, "refs/ferry/state", "state.json")) ?? "{}",
    );
    expect(state.holds).toEqual({});
    expect(Object.keys(state.unitHolds.staging)).toEqual(["group:team-b"]);
    await pushImage(world.registry.url, "acme/search", "1.2.0", { content: "search-1.2.0" });
    await world.server.scanNow();
    await world.settle();
    const next = (await world.pulls("open")).find((pull) => pull.head.ref === "ferry-group/staging/team-c");
    expect(next?.title).toBe("Promote search 1.2.0 to staging (team-c)");
    const [dashboard] = await dashboards(world);
    expect(dashboard?.body).toContain("| staging | cart (group team\\-b) |");
    expect(dashboard?.body).toContain(`| #${held} | on hold (hold by @mona) |`);
  });
});
