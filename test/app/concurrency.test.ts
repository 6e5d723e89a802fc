/**
 * Several replicas (no shared in-process lock) acting on one environment at once, through the real
 * adapter against the emulator: one branch, one PR, no force (docs/reliability.md rows 22–23, goal G7).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitHubRepoAdapter } from "../../src/adapters/github/github-repo.js";
import { syncRepository } from "../../src/app/sync-repository.js";
import { installApp, startWorld, type World } from "../support/github-emulator-world.js";
import { configRepo, FakeRegistry, fakeDeps } from "../support/app-fakes.js";
import { inspect, repos } from "../../src/sandbox/github/index.js";

describe("concurrent writers on one environment", { timeout: 60_000 }, () => {
  let world: World;
  let github: () => GitHubRepoAdapter;
  const registry = new FakeRegistry();
  registry.push("ghcr.io/acme/shop", "1.7.0");
  registry.push("ghcr.io/acme/shop", "1.8.0");

  beforeEach(async () => {
    world = await startWorld({ files: configRepo() });
    const app = await installApp(world);
    github = () => new GitHubRepoAdapter(app.installation, "acme", "config");
    repos.protectBranch(world.emu, "acme", "config", "main", { requiredChecks: ["ci"] });
  });
  afterEach(async () => {
    await world.emu.close();
  });

  it("gives one branch and one PR when five replicas sync at once", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => syncRepository(fakeDeps(github(), registry), { reason: "registry" })),
    );
    expect(results.filter((result) => result.status === "rejected")).toEqual([]);
    const { data: pulls } = await world
      .as("mona")
      .rest.pulls.list({ owner: "acme", repo: "config", state: "all" });
    expect(pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);
    expect(
      await inspect.readFile(
        world.emu,
        "acme",
        "config",
        "ferry/staging",
        "overlays/staging/kustomization.yaml",
      ),
    ).toContain('newTag: "1.8.0"');
  });

  it("redoes the write when a rival moves the branch just before the compare-and-swap", async () => {
    await syncRepository(fakeDeps(github(), registry), { reason: "registry" });
    registry.push("ghcr.io/acme/shop", "1.8.1");
    world.emu.faults.refRace({ ref: "heads/ferry/staging", count: 1 });
    await syncRepository(fakeDeps(github(), registry), { reason: "registry" });
    const { data: pulls } = await world
      .as("mona")
      .rest.pulls.list({ owner: "acme", repo: "config", state: "all" });
    expect(pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.1 to staging"]);
    expect(
      await inspect.readFile(
        world.emu,
        "acme",
        "config",
        "ferry/staging",
        "overlays/staging/kustomization.yaml",
      ),
    ).toContain('newTag: "1.8.1"');
  });
});
