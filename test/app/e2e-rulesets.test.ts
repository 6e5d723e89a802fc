import { actAs, inspect, repos } from "../../packages/sandbox/src/github/index.js";
/**
 * Required checks from repository rulesets. A base can require checks through a ruleset
 * (`required_status_checks` in `GET /repos/{o}/{r}/rules/branches/{branch}`,
 * https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch) instead of classic branch
 * protection, and GitHub refuses the merge until they pass, as it does for protection's
 * (https://github.com/renovatebot/renovate/issues/31525 asks tools to read both). A reader of
 * classic protection alone sees an unprotected base, merges at once, is refused, and tells people
 * to merge by hand.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startWorld, type World } from "../support/app-e2e-world.js";

describe("a config repository whose required checks come from a ruleset", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("waits for the ruleset's required check and merges once it passes, with no 'merge by hand' comment", async () => {
    world = await startWorld({ ci: false });
    // No classic protection: the ruleset alone requires `ci` on main.
    world.emu.repo("acme", "config").protections.clear();
    repos.addRuleset(world.emu, "acme", "config", { name: "main", requiredChecks: ["ci"] });
    await world.push("1.8.0");
    const [opened] = await world.pulls("open");
    expect(opened?.title).toBe("Promote shop 1.8.0 to staging");
    expect(inspect.listComments(world.emu, "acme", "config", opened!.number)).toEqual([]);
    actAs.setStatus(world.emu, "acme", "config", opened!.head.sha, { context: "ci", state: "success" });
    await world.settle();
    expect(
      (await world.pulls("all")).find((pull) => pull.number === opened!.number)?.merged_at,
    ).not.toBeNull();
    expect(inspect.listComments(world.emu, "acme", "config", opened!.number)).toEqual([]);
  });
});

/**
 * A base with a merge queue (ruleset rule `merge_queue`): `PUT /merge` is refused with "Changes
 * must be made through the merge queue" (the wording tools meet, e.g.
 * https://github.com/projectbluefin/common/pull/783: a direct merge "always failed"); a tool adds
 * the PR with GraphQL `enqueuePullRequest` (https://github.com/renovatebot/renovate/pull/45721) and
 * the queue merges it once the checks pass on the merge group.
 */
describe("a config repository whose base has a merge queue", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("enqueues the staging PR instead of merging it, and the queue merges it after CI passes on the merge group", async () => {
    world = await startWorld({ ci: true });
    world.emu.repo("acme", "config").protections.clear();
    repos.setRepoSettings(world.emu, "acme", "config", { allowAutoMerge: false });
    repos.addRuleset(world.emu, "acme", "config", { name: "main", requiredChecks: ["ci"], mergeQueue: {} });
    await world.push("1.8.0");
    const [pull] = (await world.pulls("all")).filter((candidate) => candidate.head.ref === "ferry/staging");
    expect(pull?.merged_at).not.toBeNull();
    expect(
      await inspect.readFile(world.emu, "acme", "config", "main", "overlays/staging/kustomization.yaml"),
    ).toContain('newTag: "1.8.0"');
    expect(inspect.listComments(world.emu, "acme", "config", pull!.number)).toEqual([]);
    // It went through the queue: no direct merge succeeded.
    const merges = world
      .appRequests(0)
      .filter((request) => request.path.endsWith(`/pulls/${pull!.number}/merge`));
    expect(merges.map((request) => request.status)).not.toContain(200);
  });

  it("retries an enqueue GitHub answered with a 5xx instead of asking for it by hand", async () => {
    world = await startWorld({
      ci: true,
      server: { ferry: { workRetry: { attempts: 4, firstDelayMs: 100, maxDelayMs: 10_000 } } },
    });
    world.emu.repo("acme", "config").protections.clear();
    repos.setRepoSettings(world.emu, "acme", "config", { allowAutoMerge: false });
    repos.addRuleset(world.emu, "acme", "config", { name: "main", requiredChecks: ["ci"], mergeQueue: {} });
    world.emu.faults.serverError({ status: 502, count: 1, route: "POST /graphql" });
    await world.push("1.8.0");
    const deadline = Date.now() + 30_000;
    let pull = (await world.pulls("all")).find((candidate) => candidate.head.ref === "ferry/staging");
    while (!pull?.merged_at && Date.now() < deadline) {
      await world.settle();
      pull = (await world.pulls("all")).find((candidate) => candidate.head.ref === "ferry/staging");
    }
    expect(pull?.merged_at).not.toBeNull();
    expect(inspect.listComments(world.emu, "acme", "config", pull!.number)).toEqual([]);
    expect(
      world
        .appRequests(0)
        .filter((request) => request.path === "/graphql")
        .map((r) => r.status),
    ).toContain(502);
  });
});
