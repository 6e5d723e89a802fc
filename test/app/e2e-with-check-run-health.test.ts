/**
 * End to end, health from a check run (docs/config.md "Health", `source: check-run`): a team's own
 * deployer (a GitHub App of its own, e.g. a smoke-test workflow's app) reports staging's health as
 * a check run on the config commit it deployed, and prod soaks on it. Only the app the config
 * names counts, whatever the run's name: another app posting the same name, and a person who can
 * write to the repository, cannot walk a release into prod.
 */
import type { Octokit } from "@octokit/rest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseBody } from "../../src/core/pr/body.js";
import { commandReply, startWorld, type World } from "../support/app-e2e-world.js";
import { configHead, soakOnStagingHealth } from "../support/soak-config.js";
import { installApp } from "../support/github-emulator-world.js";

const RUN = "deploy/staging";

describe("health from a check run (end to end)", () => {
  let world: World;
  let offsetMs = 0;
  const later = (ms: number) => {
    world.emu.advanceClock(ms);
    offsetMs += ms;
  };
  beforeEach(async () => {
    offsetMs = 0;
    world = await startWorld({ ci: true, server: { ferry: { now: () => new Date(Date.now() + offsetMs) } } });
  });
  afterEach(async () => {
    await world.close();
  });

  const checkRunConfig = (appId: number) =>
    soakOnStagingHealth(
      world,
      `    health: { source: check-run, checkRun: ${RUN}, appId: ${appId} }\n`,
      "staging's health is the deployer's check run; prod soaks on it",
    );

  const report = (as: Octokit, sha: string, conclusion: "success" | "failure") =>
    as.rest.checks.create({
      owner: "acme",
      repo: "config",
      head_sha: sha,
      name: RUN,
      status: "completed",
      conclusion,
      completed_at: new Date(Date.now() + offsetMs).toISOString(),
    });

  it("a promotion waits for the named app's check run on the staging commit, ignores any other app, then proceeds", async () => {
    const worldLike = { emu: world.emu } as Parameters<typeof installApp>[0];
    const deployer = await installApp(worldLike, { slug: "deployer", permissions: { checks: "write" } });
    const impostor = await installApp(worldLike, { slug: "impostor", permissions: { checks: "write" } });
    await checkRunConfig(deployer.appId);
    const digest = await world.push("1.8.0");
    const staged = await configHead(world);
    const issue = await world.openIssue();
    expect(await commandReply(world, issue, "/promote prod")).toMatch(/no health reported for staging/);

    // The deployer's smoke test failed; another app reports success under the same name.
    await report(deployer.installation, staged, "failure");
    later(60_000);
    await report(impostor.installation, staged, "success");
    later(3_600_000);
    expect(await commandReply(world, issue, "/promote prod")).toMatch(/staging is not healthy/);
    expect((await world.pulls()).filter((pull) => pull.head.ref === "ferry/prod")).toEqual([]);

    // The deployer reports success: the soak counts from there.
    await report(deployer.installation, staged, "success");
    later(20 * 60_000);
    expect(await commandReply(world, issue, "/promote prod")).toMatch(/less than its soak of 30m/);
    later(15 * 60_000);
    await commandReply(world, issue, "/promote prod");
    const prod = (await world.pulls("open")).filter((pull) => pull.head.ref === "ferry/prod");
    expect(prod).toHaveLength(1);
    expect(parseBody(prod[0]!.body)?.changes[0]?.to).toEqual({ tag: "1.8.0", digest });
  });
});
