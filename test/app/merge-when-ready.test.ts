/**
 * Ferry merges itself (no native auto-merge) only the PR it opened, at the commit it wrote: the
 * route is a check event on the PR's head after someone pushed into the branch.
 */
import { describe, expect, it } from "vitest";
import { loadRepoConfig } from "../../src/app/load-repo-config.js";
import { mergeWhenReady } from "../../src/app/merge-when-ready.js";
import { syncRepository } from "../../src/app/sync-repository.js";
import { configRepo, FakeGitHub, FakeRegistry, fakeDeps, kustomization } from "../support/app-fakes.js";

function setup() {
  const github = new FakeGitHub(configRepo());
  const registry = new FakeRegistry();
  registry.push("ghcr.io/acme/shop", "1.7.0");
  registry.push("ghcr.io/acme/shop", "1.8.0");
  github.protectedBranches.set("main", ["ci"]);
  return { github, registry, deps: fakeDeps(github, registry) };
}

describe("mergeWhenReady merges only the commit Ferry wrote, and says so when it cannot", () => {
  it("does not merge a Ferry PR whose head is a commit someone else pushed, even with its checks green", async () => {
    const { github, deps } = setup();
    await syncRepository(deps, { reason: "registry" });
    const pull = github.pulls[0]!;
    expect(pull.merged).toBe(false);
    const foreign = github.push("ferry/staging", {
      "overlays/staging/kustomization.yaml": kustomization("999.0.0"),
    });
    pull.headSha = foreign;
    github.checks.set(foreign, "success");
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    expect(await mergeWhenReady(deps, loaded, { ...pull })).toBe("not-ferry");
    expect(pull.merged).toBe(false);
    expect(github.file("main", "overlays/staging/kustomization.yaml")).toContain('newTag: "1.7.0"');
  });

  it("does not merge a PR from ferry/staging that the app did not open", async () => {
    const { github, deps } = setup();
    await syncRepository(deps, { reason: "registry" });
    const pull = github.pulls[0]!;
    pull.author = "hubot";
    github.checks.set(pull.headSha, "success");
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    expect(await mergeWhenReady(deps, loaded, { ...pull })).toBe("not-ferry");
    expect(pull.merged).toBe(false);
  });

  it("merges Ferry's own commit once its checks pass", async () => {
    const { github, deps } = setup();
    await syncRepository(deps, { reason: "registry" });
    const pull = github.pulls[0]!;
    github.checks.set(pull.headSha, "success");
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    expect(await mergeWhenReady(deps, loaded, { ...pull })).toBe("merged");
    expect(github.file("main", "overlays/staging/kustomization.yaml")).toContain('newTag: "1.8.0"');
  });

  it("says nothing when the queue merged the PR between refusing a direct merge and Ferry's enqueue (another event's)", async () => {
    const { github, deps } = setup();
    await syncRepository(deps, { reason: "registry" });
    const pull = github.pulls[0]!;
    github.checks.set(pull.headSha, "success");
    github.mergeQueue = (queued) => {
      github.mergeNow(queued.number);
      return { refused: "Pull request is closed" };
    };
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    expect(await mergeWhenReady(deps, loaded, { ...pull })).toBe("merged");
    expect(github.comments).toEqual([]);
  });

  it("asks for a hand, in GitHub's words, when GitHub will not queue the open PR", async () => {
    const { github, deps } = setup();
    await syncRepository(deps, { reason: "registry" });
    const pull = github.pulls[0]!;
    github.checks.set(pull.headSha, "success");
    github.mergeQueue = () => ({ refused: "Pull request is not mergeable: conflict" });
    const loaded = await loadRepoConfig(deps);
    if (!loaded.ok) throw new Error("config");
    expect(await mergeWhenReady(deps, loaded, { ...pull })).toBe("stopped");
    expect(github.comments).toEqual([
      {
        issue: pull.number,
        body: "Ferry could not add this pull request to the merge queue: Pull request is not mergeable: conflict. Add it by hand.",
      },
    ]);
  });
});
