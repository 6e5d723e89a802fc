/**
 * Change windows and freezes end to end (docs/config.md "Change windows and freezes"), on the
 * GitHub emulator with `ferry/window` a required status of main: a freeze stops Ferry's automatic
 * bump of prod (the PR waits, unmerged) and a person's merge of a PR touching prod; `/promote prod
 * --override-freeze "hotfix"` by the override role lets that one promotion through and is recorded
 * (reply, state ref, status description); anyone else is refused the override; the scan re-posts
 * the status once the freeze ends. The clock is injected: nothing waits for real time.
 */
import { afterEach, describe, expect, it } from "vitest";
import { actAs, repos } from "../../packages/sandbox/src/github/index.js";
import { commandReactions, commentsOn, startWorld, type World } from "../support/app-e2e-world.js";

const config = (host: string) => `images:
  shop:
    repository: ${host}/acme/shop
    policy: { range: "^1.0.0" }
environments:
  staging:
    paths: [overlays/staging]
    update: auto
    merge: auto
  prod:
    paths: [overlays/prod]
    update: auto
    merge: auto
    promoters: { permission: write }
    freeze:
      - { from: 2026-12-20, to: 2027-01-04, reason: end-of-year, timeZone: Europe/Berlin }
    overrideFreeze: { users: [mona] }
`;

async function windowStatus(world: World, sha: string) {
  const { data } = await world.as.mona.rest.repos.listCommitStatusesForRef({
    owner: "acme",
    repo: "config",
    ref: sha,
  });
  return data.find((status) => status.context === "ferry/window");
}

async function mergeRefusal(world: World, number: number): Promise<string> {
  try {
    await world.as.mona.rest.pulls.merge({ owner: "acme", repo: "config", pull_number: number });
    return "merged";
  } catch (error) {
    const { status, message } = error as { status: number; message: string };
    return `${status} ${message}`;
  }
}

describe("change windows and freezes", { timeout: 400_000 }, () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("a freeze holds Ferry's bump and a person's merge; an override by the role lets one promotion through, recorded", async () => {
    let clock = new Date("2026-12-24T12:00:00Z");
    world = await startWorld({
      ci: true,
      files: (host) => ({ ".github/ferry.yml": config(host) }),
      server: { ferry: { now: () => clock } },
    });
    repos.protectBranch(world.emu, "acme", "config", "main", { requiredChecks: ["ci", "ferry/window"] });

    // A person's PR touching prod, opened during the freeze.
    await actAs.commit(
      world.emu,
      "acme",
      "config",
      "tune-prod",
      { "overlays/prod/deployment.yaml": "kind: Deployment\n# tuned\n" },
      "Tune prod",
      { as: "mona" },
    );
    const person = await actAs.openPullRequest(world.emu, "acme", "config", {
      head: "tune-prod",
      as: "mona",
      title: "Tune prod",
    });
    await world.settle();

    // shop 1.8.0: staging (no window) merges; prod's PR is opened but Ferry does not merge it.
    await world.push("1.8.0");
    const pulls = await world.pulls("all");
    const staging = pulls.find((pull) => pull.head.ref === "ferry/staging")!;
    const prod = pulls.find((pull) => pull.head.ref === "ferry/prod")!;
    expect(staging.merged_at).not.toBeNull();
    expect(prod.state).toBe("open");
    expect(prod.merged_at).toBeNull();
    expect(await windowStatus(world, staging.head.sha)).toMatchObject({ state: "success" });
    expect(await windowStatus(world, prod.head.sha)).toMatchObject({
      state: "failure",
      description: "prod is frozen until 2027-01-03 23:00 UTC: end-of-year",
    });

    // A person's merge is refused by GitHub: ferry/window is required and failing.
    const { data: personPull } = await world.as.mona.rest.pulls.get({
      owner: "acme",
      repo: "config",
      pull_number: person,
    });
    expect(await windowStatus(world, personPull.head.sha)).toMatchObject({ state: "failure" });
    expect(await mergeRefusal(world, person)).toMatch(/^405 .*ferry\/window/);
    expect(await mergeRefusal(world, prod.number)).toMatch(/^405 .*ferry\/window/);

    const issue = await world.openIssue();
    // Without an override, /promote is refused with the freeze and its reason.
    expect(await commandReactions(world, issue, "/promote prod")).toContain("-1");
    expect((await commentsOn(world, issue)).at(-1)).toMatch(
      /^@mona prod is frozen until 2027-01-03 23:00 UTC: end-of-year\. Only @mona may override/,
    );
    // hubot may promote prod (write) but is not in the override role.
    expect(
      await commandReactions(world, issue, '/promote prod --override-freeze "hotfix"', "hubot"),
    ).toContain("-1");
    expect((await commentsOn(world, issue)).at(-1)).toBe(
      "@hubot prod is frozen until 2027-01-03 23:00 UTC: end-of-year, and only @mona may override it",
    );
    expect((await world.pulls("all")).find((pull) => pull.head.ref === "ferry/prod")!.merged_at).toBeNull();

    // mona overrides: that promotion goes through, and the override is recorded.
    expect(await commandReactions(world, issue, '/promote prod --override-freeze "hotfix"')).toContain(
      "rocket",
    );
    // /promote rewrites prod's PR as a promotion: the override is for the head it wrote.
    const promoted = (await world.pulls("all")).find((pull) => pull.number === prod.number)!;
    expect((await commentsOn(world, issue)).at(-1)).toContain(
      `Override recorded: prod is frozen until 2027-01-03 23:00 UTC: end-of-year; @mona lets #${prod.number} through at ${promoted.head.sha.slice(0, 12)} ("hotfix").`,
    );
    expect(await windowStatus(world, promoted.head.sha)).toMatchObject({
      state: "success",
      description: "prod closed; override by @mona: hotfix",
    });
    expect(promoted.merged_at).not.toBeNull();
    const { data: stateRef } = await world.as.mona.rest.git.getRef({
      owner: "acme",
      repo: "config",
      ref: "ferry/state",
    });
    const { data: stateFile } = await world.as.mona.rest.repos.getContent({
      owner: "acme",
      repo: "config",
      path: "state.json",
      ref: stateRef.object.sha,
    });
    const state = JSON.parse(Buffer.from((stateFile as { content: string }).content, "base64").toString());
    expect(state.windows.overrides.prod).toEqual([
      {
        by: "mona",
        at: "2026-12-24T12:00:00.000Z",
        reason: "hotfix",
        sha: promoted.head.sha,
        pull: prod.number,
        command: "promote",
      },
    ]);

    // The override was for that promotion only: the person's PR is still blocked.
    expect(await mergeRefusal(world, person)).toMatch(/^405 .*ferry\/window/);

    // The freeze ends: the scan re-posts ferry/window, and the person may merge.
    await world.server.scanNow();
    await world.settle();
    clock = new Date("2027-01-04T09:00:00Z");
    await world.server.scanNow();
    await world.settle();
    expect(await windowStatus(world, personPull.head.sha)).toMatchObject({ state: "success" });
    expect(await mergeRefusal(world, person)).toBe("merged");
  });
});
