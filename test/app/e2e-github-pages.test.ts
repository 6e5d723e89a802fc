/**
 * GitHub lists a commit's check runs and statuses 100 a page at most ("per_page … max 100",
 * https://docs.github.com/en/rest/checks/runs#list-check-runs-for-a-git-reference and
 * https://docs.github.com/en/rest/commits/statuses#get-the-combined-status-for-a-specific-reference),
 * with `total_count` and Link headers for the rest. A matrix build easily reports more: the state
 * Ferry gates on must come from every page. A pull request's files come 100 a page too (3,000 in
 * all, https://docs.github.com/en/rest/pulls/pulls#list-pull-requests-files).
 */
import { afterEach, describe, expect, it } from "vitest";
import { actAs, inspect, repos } from "../../packages/sandbox/src/github/index.js";
import { stagingPull, startWorld, type World } from "../support/app-e2e-world.js";

/**
 * Completes `count` workflow runs on `sha` of acme/<repo>, the first one `first` and the others
 * successes, without Ferry hearing of them; GitHub lists the first one last (newest first).
 */
async function quietRuns(
  world: World,
  repo: string,
  sha: string,
  first: { name: string; conclusion: string },
  count: number,
  branch?: string,
): Promise<void> {
  world.onlyEvents([]);
  const options = branch ? { branch } : {};
  await actAs.completeWorkflowRun(world.emu, "acme", repo, sha, first.conclusion, {
    name: first.name,
    ...options,
  });
  for (let i = 1; i < count; i++)
    await actAs.completeWorkflowRun(world.emu, "acme", repo, sha, "success", {
      name: `matrix-${String(i).padStart(3, "0")}`,
      ...options,
    });
  await world.settle();
  world.onlyEvents(undefined);
}

describe("more than 100 check runs on one commit", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("CI gating: a failing run on the second page keeps the tag from being proposed", async () => {
    world = await startWorld({ ci: false, source: true });
    const revision = (await inspect.branchSha(world.emu, "acme", "shop", "main"))!;
    await quietRuns(world, "shop", revision, { name: "matrix-000", conclusion: "failure" }, 119);
    await world.push("1.8.0", { "org.opencontainers.image.revision": revision });
    // The 120th run is the one Ferry hears of: 119 of the 120 passed, the oldest failed.
    await actAs.completeWorkflowRun(world.emu, "acme", "shop", revision, "success", { name: "matrix-119" });
    await world.settle();
    await world.server.scanNow();
    await world.settle();
    expect(await world.pulls()).toEqual([]);
  });

  it("merge: auto merges once the required check passes, though it is listed on the second page", async () => {
    world = await startWorld({ ci: false });
    // No native auto-merge: Ferry reads the checks and merges itself.
    repos.setRepoSettings(world.emu, "acme", "config", { allowAutoMerge: false });
    await world.push("1.8.0");
    const pull = await stagingPull(world);
    expect(pull.merged_at).toBeNull();
    await quietRuns(
      world,
      "config",
      pull.head.sha,
      { name: "ci", conclusion: "success" },
      119,
      "ferry/staging",
    );
    await actAs.completeWorkflowRun(world.emu, "acme", "config", pull.head.sha, "success", {
      name: "matrix-119",
      branch: "ferry/staging",
    });
    await world.settle();
    expect((await stagingPull(world)).merged_at).not.toBeNull();
  });
});

describe("a pull request with more than 100 changed files", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("gets the ferry/config check for an environment file listed on the second page", async () => {
    world = await startWorld({ ci: false });
    const overlay = (await inspect.readFile(
      world.emu,
      "acme",
      "config",
      "main",
      "overlays/staging/kustomization.yaml",
    ))!;
    const files: Record<string, string> = {
      "overlays/staging/kustomization.yaml": overlay.replace(
        "  - deployment.yaml\n",
        "  - deployment.yaml\n  - secret.yaml\n",
      ),
      "overlays/staging/secret.yaml":
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: shop-db\nstringData:\n  password: hunter2\n",
    };
    // 120 pages of docs sort before overlays/: GitHub lists the environment's files on page 2.
    for (let i = 0; i < 120; i++) files[`docs/page-${String(i).padStart(3, "0")}.md`] = `page ${i}\n`;
    await actAs.createBranch(world.emu, "acme", "config", "docs-and-db", "main", { as: "mona" });
    const head = await actAs.commit(world.emu, "acme", "config", "docs-and-db", files, "Docs and the db", {
      as: "mona",
    });
    await actAs.openPullRequest(world.emu, "acme", "config", {
      head: "docs-and-db",
      title: "Docs",
      as: "mona",
    });
    await world.settle();
    const { data } = await world.as.mona.rest.checks.listForRef({ owner: "acme", repo: "config", ref: head });
    expect(data.check_runs.find((check) => check.name === "ferry/config")?.conclusion).toBe("failure");
  });
});
