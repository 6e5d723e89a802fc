/**
 * Several replicas (no shared in-process lock) acting on one environment at once, through the real
 * adapter against the emulator: one branch, one PR, no force (docs/reliability.md rows 22–23, goal G7).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGitHubRepo, type GitHubRepoAdapter } from "../../src/adapters/github/github-repo.js";
import type { GitHubRepoPort } from "../../src/app/github-port.js";
import { syncRepository } from "../../src/app/sync-repository.js";
import { ferryPull } from "../../src/app/pull-trust.js";
import { installApp, setTagOnMain, startWorld, type World } from "../support/github-emulator-world.js";
import { configRepo, FakeRegistry, fakeDeps } from "../support/app-fakes.js";
import { inspect, repos } from "../../packages/sandbox/src/github/index.js";
import { waitUntil } from "../support/scan-fleet.js";

describe("concurrent writers on one environment", () => {
  let world: World;
  let github: () => GitHubRepoAdapter;
  const registry = new FakeRegistry();
  registry.push("ghcr.io/acme/shop", "1.7.0");
  registry.push("ghcr.io/acme/shop", "1.8.0");

  beforeEach(async () => {
    world = await startWorld({ files: configRepo() });
    const app = await installApp(world);
    github = () => createGitHubRepo(app.installation, "acme", "config");
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

  it("when five replicas sync at once the PR's head is one commit on the base, the one its sealed plan names", async () => {
    // Each replica finds no branch and writes the same plan: the losers take the winner's commit
    // instead of writing over it, so the PR never names a head that has moved (row 80).
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => syncRepository(fakeDeps(github(), registry), { reason: "registry" })),
    );
    expect(results.filter((result) => result.status === "rejected")).toEqual([]);
    const pull = (await github().findOpenPull("ferry/staging"))!;
    const trusted = ferryPull(fakeDeps(github(), registry), pull);
    expect(trusted?.block?.head).toBe(pull.headSha);
    expect(trusted?.headIsFerrys).toBe(true);
    const main = await world
      .as("mona")
      .rest.repos.getBranch({ owner: "acme", repo: "config", branch: "main" });
    const { data: head } = await world
      .as("mona")
      .rest.git.getCommit({ owner: "acme", repo: "config", commit_sha: pull.headSha });
    expect(head.parents.map((parent) => parent.sha)).toEqual([main.data.commit.sha]);
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

  /** One replica's registry view: the tags it listed before (or after) the newest push. */
  const registryWith = (...tags: string[]): FakeRegistry => {
    const view = new FakeRegistry();
    for (const tag of ["1.7.0", ...tags]) view.push("ghcr.io/acme/shop", tag);
    return view;
  };
  /** `port`, with `method` running `before` once before its first call (another replica's whole sync). */
  const before = <K extends "updateRef" | "updatePull" | "findOpenPull">(
    port: GitHubRepoPort,
    method: K,
    run: () => Promise<unknown>,
  ): GitHubRepoPort => {
    let done = false;
    return new Proxy(port, {
      get(target, property) {
        const value = Reflect.get(target, property, target) as unknown;
        if (typeof value !== "function") return value;
        if (property !== method) return value.bind(target);
        return async (...args: unknown[]) => {
          if (!done) {
            done = true;
            await run();
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  };
  const stagingTag = async () =>
    /newTag: "?([^"\n]+)"?/.exec(
      (await inspect.readFile(
        world.emu,
        "acme",
        "config",
        "ferry/staging",
        "overlays/staging/kustomization.yaml",
      )) ?? "",
    )?.[1];
  const openTitles = async () =>
    (await world.as("mona").rest.pulls.list({ owner: "acme", repo: "config", state: "open" })).data.map(
      (pull) => pull.title,
    );

  it("a replica that loses the compare-and-swap to a newer tag keeps the newer tag instead of redoing its older one", async () => {
    const stale = registryWith("1.8.3");
    await syncRepository(fakeDeps(github(), stale), { reason: "registry" });
    stale.push("ghcr.io/acme/shop", "1.8.4");
    const fresh = registryWith("1.8.3", "1.8.4", "1.8.9");
    // The stale replica is about to move the branch to 1.8.4 when the fresh one writes 1.8.9 first.
    const staleGitHub = before(github(), "updateRef", () =>
      syncRepository(fakeDeps(github(), fresh), { reason: "registry" }),
    );
    const result = await syncRepository(fakeDeps(staleGitHub, stale), { reason: "registry" });
    expect(result.environments.staging).toBe("unchanged");
    expect(await stagingTag()).toBe("1.8.9");
    expect(await openTitles()).toEqual(["Promote shop 1.8.9 to staging"]);
  });

  it("a replica that reads the PR before a newer write is described keeps the branch's newer tag", async () => {
    const stale = registryWith("1.8.3");
    await syncRepository(fakeDeps(github(), stale), { reason: "registry" });
    stale.push("ghcr.io/acme/shop", "1.8.4");
    const fresh = registryWith("1.8.3", "1.8.4", "1.8.9");
    // The fresh replica has moved the branch to 1.8.9 but not yet rewritten the PR body (still
    // 1.8.3) when the stale replica plans 1.8.4 and reads the PR.
    const freshGitHub = before(github(), "updatePull", () =>
      syncRepository(fakeDeps(github(), stale), { reason: "registry" }),
    );
    await syncRepository(fakeDeps(freshGitHub, fresh), { reason: "registry" });
    expect(await stagingTag()).toBe("1.8.9");
    expect(await openTitles()).toEqual(["Promote shop 1.8.9 to staging"]);
  });
  it("a sync that loaded the base before another sync's PR merged does not open the merged change again", async () => {
    // The other sync opens the PR for 1.8.0 and it merges (branch deleted, as GitHub does) while
    // this one, which read the base before that merge, waits its turn (in one process: the unit's
    // lock). Written as planned, its change would go on the old base as a second PR for 1.8.0.
    const mona = world.as("mona");
    const view = registryWith("1.8.0");
    const mergedMeanwhile = async () => {
      await syncRepository(fakeDeps(github(), view), { reason: "registry" });
      const [pull] = (await mona.rest.pulls.list({ owner: "acme", repo: "config", state: "open" })).data;
      await mona.rest.repos.createCommitStatus({
        owner: "acme",
        repo: "config",
        sha: pull!.head.sha,
        state: "success",
        context: "ci",
      });
      const merged = async () =>
        (await mona.rest.pulls.get({ owner: "acme", repo: "config", pull_number: pull!.number })).data.merged;
      try {
        await mona.rest.pulls.merge({ owner: "acme", repo: "config", pull_number: pull!.number });
      } catch (error) {
        // Ferry asked for auto-merge, and the status just set lets GitHub land the PR itself: on a
        // loaded machine that merge can come first, and mona's is refused. Either way it merges.
        await waitUntil(
          merged,
          240_000,
          `PR #${pull!.number} merged after mona's merge was refused (${String(error)})`,
        );
      }
      await mona.rest.git.deleteRef({ owner: "acme", repo: "config", ref: "heads/ferry/staging" });
    };
    const late = before(github(), "findOpenPull", mergedMeanwhile);
    const stale = await syncRepository(fakeDeps(late, view), { reason: "registry" });
    expect(stale.environments.staging).toBe("none");
    const titles = (await mona.rest.pulls.list({ owner: "acme", repo: "config", state: "all" })).data.map(
      (pull) => pull.title,
    );
    expect(titles).toEqual(["Promote shop 1.8.0 to staging"]);
    // Planned from the new base, there is nothing left to propose either.
    const again = await syncRepository(fakeDeps(github(), view), { reason: "registry" });
    expect(again.environments.staging).not.toBe("opened");
    expect((await mona.rest.pulls.list({ owner: "acme", repo: "config", state: "all" })).data).toHaveLength(
      1,
    );
  });
  it("a PR whose line the base changed after it was written is rebuilt on the base, not left conflicting", async () => {
    // Ferry's PR for 1.8.0 is written on the base that runs 1.7.0; then the base's line moves to
    // 1.7.5 (a hand edit, or the previous Ferry PR merging after this sync read the base). Planned
    // on the new base the change is the same (1.8.0), but the PR as written conflicts with the base
    // on that line and never merges: it is rebuilt, not answered "unchanged" for ever.
    const mona = world.as("mona");
    const view = registryWith("1.8.0");
    expect(
      (await syncRepository(fakeDeps(github(), view), { reason: "registry" })).environments.staging,
    ).toBe("opened");
    const path = "overlays/staging/kustomization.yaml";
    await setTagOnMain(world.emu, "staging", "1.7.5");
    const conflicting = (await mona.rest.pulls.list({ owner: "acme", repo: "config", state: "open" }))
      .data[0]!;
    expect(
      (await mona.rest.pulls.get({ owner: "acme", repo: "config", pull_number: conflicting.number })).data
        .mergeable,
    ).toBe(false);

    const again = await syncRepository(fakeDeps(github(), view), { reason: "push" });
    expect(again.environments.staging).toBe("updated");
    const { data: pull } = await mona.rest.pulls.get({
      owner: "acme",
      repo: "config",
      pull_number: conflicting.number,
    });
    expect(pull.mergeable).toBe(true);
    const main = (await mona.rest.repos.getBranch({ owner: "acme", repo: "config", branch: "main" })).data
      .commit.sha;
    const head = (await mona.rest.git.getCommit({ owner: "acme", repo: "config", commit_sha: pull.head.sha }))
      .data;
    // Ferry's own commit with the base as its first parent (a fast-forward of the branch, row 75).
    expect(head.parents[0]!.sha).toBe(main);
    expect(await inspect.readFile(world.emu, "acme", "config", "ferry/staging", path)).toContain(
      'newTag: "1.8.0"',
    );
    // Rebuilt once: the next sync finds it written on the base as it is.
    expect((await syncRepository(fakeDeps(github(), view), { reason: "push" })).environments.staging).toBe(
      "unchanged",
    );
  });
});
