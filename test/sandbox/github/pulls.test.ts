import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectStatus, installApp, startWorld, type World } from "../../support/github-emulator-world.js";
import { actAs, inspect, repos } from "../../../packages/sandbox/src/github/index.js";

const owner = "acme";
const repo = "config";

describe("pull requests: creation, listing, mergeability and the three merge methods", () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.emu.close();
  });

  async function branchWith(
    branch: string,
    files: Record<string, string | null>,
    message = `change ${branch}`,
  ): Promise<string> {
    return actAs.commit(world.emu, owner, repo, branch, files, message, { as: "hubot" });
  }

  it("refuses a second open PR for the same head and base, and PRs without commits", async () => {
    const octokit = world.as("hubot");
    await branchWith("ferry/staging", { "a.txt": "a\n" });
    await octokit.rest.pulls.create({ owner, repo, head: "ferry/staging", base: "main", title: "one" });
    const twice = await expectStatus(
      octokit.rest.pulls.create({ owner, repo, head: "ferry/staging", base: "main", title: "two" }),
      422,
    );
    expect(twice.message).toBe("Validation Failed");
    await actAs.createBranch(world.emu, owner, repo, "empty");
    await expectStatus(
      octokit.rest.pulls.create({ owner, repo, head: "empty", base: "main", title: "nothing" }),
      422,
    );
    await expectStatus(
      octokit.rest.pulls.create({ owner, repo, head: "missing", base: "main", title: "nothing" }),
      422,
    );
  });

  it("opens one PR of five asked for at once from the same head and base, and reopens none beside it", async () => {
    const octokit = world.as("hubot");
    await branchWith("ferry/staging", { "a.txt": "a\n" });
    // Five requests in flight together: each passes its checks while the others read git.
    const created = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) =>
        octokit.rest.pulls.create({ owner, repo, head: "ferry/staging", base: "main", title: `try ${i}` }),
      ),
    );
    expect(created.filter((one) => one.status === "fulfilled")).toHaveLength(1);
    for (const refused of created.filter((one) => one.status === "rejected"))
      expect((refused as PromiseRejectedResult).reason).toMatchObject({ status: 422 });
    const open = (await octokit.rest.pulls.list({ owner, repo, state: "open" })).data;
    expect(open).toHaveLength(1);

    // A closed PR from the same branch is not reopened while another is open.
    await octokit.rest.pulls.update({ owner, repo, pull_number: open[0]!.number, state: "closed" });
    const second = await octokit.rest.pulls.create({
      owner,
      repo,
      head: "ferry/staging",
      base: "main",
      title: "two",
    });
    const reopen = (await octokit.rest.pulls
      .update({ owner, repo, pull_number: open[0]!.number, state: "open" })
      .catch((error: unknown) => error)) as { status?: number; response?: { data?: unknown } };
    expect(reopen.status).toBe(422);
    expect(JSON.stringify(reopen.response?.data)).toContain(
      "A pull request already exists for acme:ferry/staging.",
    );
    expect(
      (await octokit.rest.pulls.list({ owner, repo, state: "open" })).data.map((pull) => pull.number),
    ).toEqual([second.data.number]);
  });

  it("lists PRs filtered by head owner:branch, base and state, paginated with Link headers", async () => {
    const octokit = world.as("hubot");
    for (let i = 0; i < 5; i++) {
      await branchWith(`b${i}`, { [`f${i}.txt`]: `${i}\n` });
      await octokit.rest.pulls.create({ owner, repo, head: `b${i}`, base: "main", title: `pr ${i}` });
    }
    const { data: one } = await octokit.rest.pulls.list({ owner, repo, head: "acme:b3" });
    expect(one.map((p) => p.title)).toEqual(["pr 3"]);
    const { data: none } = await octokit.rest.pulls.list({ owner, repo, head: "acme:b3", state: "closed" });
    expect(none).toEqual([]);
    const first = await octokit.rest.pulls.list({ owner, repo, per_page: 2 });
    expect(first.data).toHaveLength(2);
    expect(first.headers.link).toMatch(/page=2>; rel="next"/);
    expect(first.headers.link).toMatch(/page=3>; rel="last"/);
    const all = await octokit.paginate(octokit.rest.pulls.list, { owner, repo, per_page: 2 });
    expect(all.map((p) => p.number).sort()).toEqual([1, 2, 3, 4, 5]);
    const capped = await octokit.rest.pulls.list({ owner, repo, per_page: 500 });
    expect(capped.data).toHaveLength(5);
  });

  it("reports dirty and refuses to merge (405) when head and base conflict", async () => {
    const octokit = world.as("hubot");
    await branchWith("ferry/staging", { "README.md": "theirs\n" });
    await actAs.commit(world.emu, owner, repo, "main", { "README.md": "ours\n" }, "conflicting", {
      as: "mona",
    });
    const { data: pr } = await octokit.rest.pulls.create({
      owner,
      repo,
      head: "ferry/staging",
      base: "main",
      title: "t",
    });
    const { data } = await octokit.rest.pulls.get({ owner, repo, pull_number: pr.number });
    expect([data.mergeable, data.mergeable_state]).toEqual([false, "dirty"]);
    const refused = await expectStatus(
      octokit.rest.pulls.merge({ owner, repo, pull_number: pr.number }),
      405,
    );
    expect(refused.message).toBe("Pull Request is not mergeable");
  });

  it("merges with a merge commit, a squash commit or rebased commits, as git computes them", async () => {
    const octokit = world.as("hubot");
    await actAs.commit(world.emu, owner, repo, "main", { "other.txt": "moved on\n" }, "base moves", {
      as: "mona",
    });
    const results: Record<string, { parents: number; files: string[] }> = {};
    for (const method of ["merge", "squash", "rebase"] as const) {
      const branch = `m-${method}`;
      await actAs.createBranch(
        world.emu,
        owner,
        repo,
        branch,
        (await inspect.branchSha(world.emu, owner, repo, "main"))!,
      );
      await actAs.commit(world.emu, owner, repo, branch, { [`${method}-1.txt`]: "1\n" }, "first", {
        as: "hubot",
      });
      await actAs.commit(world.emu, owner, repo, branch, { [`${method}-2.txt`]: "2\n" }, "second", {
        as: "hubot",
      });
      await actAs.commit(
        world.emu,
        owner,
        repo,
        "main",
        { [`main-${method}.txt`]: "x\n" },
        "main moves again",
        {
          as: "mona",
        },
      );
      const { data: pr } = await octokit.rest.pulls.create({
        owner,
        repo,
        head: branch,
        base: "main",
        title: `${method} it`,
      });
      const before = (await inspect.branchSha(world.emu, owner, repo, "main"))!;
      const { data: merged } = await octokit.rest.pulls.merge({
        owner,
        repo,
        pull_number: pr.number,
        merge_method: method,
      });
      const { data: commit } = await octokit.rest.git.getCommit({ owner, repo, commit_sha: merged.sha });
      results[method] = {
        parents: commit.parents.length,
        files: await inspect.listFiles(world.emu, owner, repo, merged.sha),
      };
      if (method === "merge")
        expect(commit.message).toBe(`Merge pull request #${pr.number} from acme/${branch}\n\nmerge it`);
      if (method === "squash") {
        expect(commit.message.split("\n")[0]).toBe(`squash it (#${pr.number})`);
        expect(commit.parents[0]!.sha).toBe(before);
      }
      if (method === "rebase") {
        expect(commit.message).toBe("second");
        const { data: parent } = await octokit.rest.git.getCommit({
          owner,
          repo,
          commit_sha: commit.parents[0]!.sha,
        });
        expect(parent.message).toBe("first");
        expect(parent.parents[0]!.sha).toBe(before);
      }
    }
    expect(results.merge!.parents).toBe(2);
    expect(results.squash!.parents).toBe(1);
    expect(results.rebase!.parents).toBe(1);
    for (const [method, { files }] of Object.entries(results))
      expect([method, files]).toEqual([
        method,
        expect.arrayContaining(["other.txt", `${method}-1.txt`, `${method}-2.txt`]),
      ]);
  });

  it("guards a merge with sha: 409 when the head moved since the caller looked", async () => {
    const octokit = world.as("hubot");
    const first = await branchWith("ferry/staging", { "a.txt": "1\n" });
    const { data: pr } = await octokit.rest.pulls.create({
      owner,
      repo,
      head: "ferry/staging",
      base: "main",
      title: "t",
    });
    await branchWith("ferry/staging", { "a.txt": "2\n" });
    const refused = await expectStatus(
      octokit.rest.pulls.merge({ owner, repo, pull_number: pr.number, sha: first }),
      409,
    );
    expect(refused.message).toBe("Head branch was modified. Review and try the merge again.");
    const { data: current } = await octokit.rest.pulls.get({ owner, repo, pull_number: pr.number });
    expect(current.head.sha).not.toBe(first);
    await octokit.rest.pulls.merge({ owner, repo, pull_number: pr.number, sha: current.head.sha });
  });

  it("closes and reopens PRs, changes their base, and deletes the head on merge when the repo says so", async () => {
    const octokit = world.as("hubot");
    repos.setRepoSettings(world.emu, owner, repo, { deleteBranchOnMerge: true });
    await branchWith("feature", { "a.txt": "1\n" });
    const { data: pr } = await octokit.rest.pulls.create({
      owner,
      repo,
      head: "feature",
      base: "main",
      title: "t",
    });
    await octokit.rest.pulls.update({ owner, repo, pull_number: pr.number, state: "closed" });
    expect((await octokit.rest.pulls.get({ owner, repo, pull_number: pr.number })).data.state).toBe("closed");
    await expectStatus(octokit.rest.pulls.merge({ owner, repo, pull_number: pr.number }), 405);
    await octokit.rest.pulls.update({ owner, repo, pull_number: pr.number, state: "open", title: "renamed" });
    await octokit.rest.pulls.merge({ owner, repo, pull_number: pr.number });
    expect(await inspect.branchSha(world.emu, owner, repo, "feature")).toBeUndefined();
  });
});

describe("branch protection: required checks, strict, required reviews", () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.emu.close();
  });

  it("blocks a merge until the required check passes, and shows unstable for failing optional checks", async () => {
    repos.protectBranch(world.emu, owner, repo, "main", { requiredChecks: ["ci/test"] });
    const octokit = world.as("hubot");
    const head = await actAs.commit(world.emu, owner, repo, "feature", { "a.txt": "1\n" }, "c", {
      as: "hubot",
    });
    const { data: pr } = await octokit.rest.pulls.create({
      owner,
      repo,
      head: "feature",
      base: "main",
      title: "t",
    });
    expect((await octokit.rest.pulls.get({ owner, repo, pull_number: pr.number })).data.mergeable_state).toBe(
      "blocked",
    );
    const refused = await expectStatus(
      octokit.rest.pulls.merge({ owner, repo, pull_number: pr.number }),
      405,
    );
    expect(refused.message).toBe('Required status check "ci/test" is expected.');
    actAs.setStatus(world.emu, owner, repo, head, { context: "ci/test", state: "failure" });
    expect((await octokit.rest.pulls.get({ owner, repo, pull_number: pr.number })).data.mergeable_state).toBe(
      "blocked",
    );
    actAs.setStatus(world.emu, owner, repo, head, { context: "ci/test", state: "success" });
    actAs.setStatus(world.emu, owner, repo, head, { context: "lint", state: "failure" });
    expect((await octokit.rest.pulls.get({ owner, repo, pull_number: pr.number })).data.mergeable_state).toBe(
      "unstable",
    );
    await octokit.rest.pulls.merge({ owner, repo, pull_number: pr.number });
  });

  it("reports behind under strict protection until the head contains the base tip", async () => {
    repos.protectBranch(world.emu, owner, repo, "main", {
      requiredChecks: [],
      strict: true,
      requiredApprovals: 0,
    });
    const octokit = world.as("hubot");
    await actAs.commit(world.emu, owner, repo, "feature", { "a.txt": "1\n" }, "c", { as: "hubot" });
    const { data: pr } = await octokit.rest.pulls.create({
      owner,
      repo,
      head: "feature",
      base: "main",
      title: "t",
    });
    await actAs.commit(world.emu, owner, repo, "main", { "b.txt": "1\n" }, "main moves", { as: "mona" });
    expect((await octokit.rest.pulls.get({ owner, repo, pull_number: pr.number })).data.mergeable_state).toBe(
      "behind",
    );
    await expectStatus(octokit.rest.pulls.merge({ owner, repo, pull_number: pr.number }), 405);
  });

  it("counts approvals only from reviewers with write access, and never the author's own", async () => {
    repos.protectBranch(world.emu, owner, repo, "main", { requiredApprovals: 1 });
    await actAs.commit(world.emu, owner, repo, "feature", { "a.txt": "1\n" }, "c", { as: "hubot" });
    const { data: pr } = await world
      .as("hubot")
      .rest.pulls.create({ owner, repo, head: "feature", base: "main", title: "t" });
    await expectStatus(
      world.as("hubot").rest.pulls.createReview({ owner, repo, pull_number: pr.number, event: "APPROVE" }),
      422,
    );
    await world.as("eve").rest.pulls.createReview({ owner, repo, pull_number: pr.number, event: "APPROVE" });
    const blocked = await expectStatus(
      world.as("hubot").rest.pulls.merge({ owner, repo, pull_number: pr.number }),
      405,
    );
    expect(blocked.message).toBe("At least 1 approving review is required by reviewers with write access.");
    await actAs.review(world.emu, owner, repo, pr.number, { as: "mona", event: "APPROVE" });
    expect(
      (await world.as("hubot").rest.pulls.get({ owner, repo, pull_number: pr.number })).data.mergeable_state,
    ).toBe("clean");
    await world.as("hubot").rest.pulls.merge({ owner, repo, pull_number: pr.number });
  });
});

describe("native auto-merge through GraphQL", () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.emu.close();
  });

  const enable = `mutation($id: ID!) { enablePullRequestAutoMerge(input: {pullRequestId: $id, mergeMethod: SQUASH}) { pullRequest { autoMergeRequest { enabledAt } } } }`;

  it("merges by itself once the required check passes, as the user who enabled it", async () => {
    repos.protectBranch(world.emu, owner, repo, "main", { requiredChecks: ["ci/test"] });
    const ferry = await installApp(world);
    const head = await actAs.commit(world.emu, owner, repo, "ferry/staging", { "a.txt": "1\n" }, "c", {
      as: "hubot",
    });
    const { data: pr } = await ferry.installation.rest.pulls.create({
      owner,
      repo,
      head: "ferry/staging",
      base: "main",
      title: "t",
    });
    const result = await ferry.installation.graphql<{
      enablePullRequestAutoMerge: { pullRequest: { autoMergeRequest: unknown } };
    }>(enable, { id: pr.node_id });
    expect(result.enablePullRequestAutoMerge.pullRequest.autoMergeRequest).not.toBeNull();
    expect(
      (await ferry.installation.rest.pulls.get({ owner, repo, pull_number: pr.number })).data.auto_merge
        ?.merge_method,
    ).toBe("squash");
    await world.emu.idle();
    expect(await inspect.getPull(world.emu, owner, repo, pr.number)).toMatchObject({ merged: false });
    actAs.setStatus(world.emu, owner, repo, head, { context: "ci/test", state: "success" });
    await world.emu.idle();
    const merged = await inspect.getPull(world.emu, owner, repo, pr.number);
    expect(merged).toMatchObject({ merged: true, merged_by: { login: ferry.botLogin } });
  });

  it("answers 'clean status' when the PR could already be merged, as GitHub does", async () => {
    repos.protectBranch(world.emu, owner, repo, "main", { requiredChecks: ["ci/test"] });
    const head = await actAs.commit(world.emu, owner, repo, "feature", { "a.txt": "1\n" }, "c", {
      as: "hubot",
    });
    actAs.setStatus(world.emu, owner, repo, head, { context: "ci/test", state: "success" });
    const { data: pr } = await world
      .as("hubot")
      .rest.pulls.create({ owner, repo, head: "feature", base: "main", title: "t" });
    await expect(world.as("hubot").graphql(enable, { id: pr.node_id })).rejects.toThrow(
      "Pull request Pull request is in clean status",
    );
  });

  it("runs simulated CI on every new head SHA and auto-merges when it passes", async () => {
    repos.protectBranch(world.emu, owner, repo, "main", { requiredChecks: ["ci/test"] });
    actAs.setCi(world.emu, owner, repo, { context: "ci/test", conclusion: "success", delayMs: 0 });
    await actAs.commit(world.emu, owner, repo, "feature", { "a.txt": "1\n" }, "c", { as: "hubot" });
    const { data: pr } = await world
      .as("hubot")
      .rest.pulls.create({ owner, repo, head: "feature", base: "main", title: "t" });
    await world.emu.idle();
    const { data: runs } = await world.as("hubot").rest.checks.listForRef({ owner, repo, ref: pr.head.sha });
    expect(runs.check_runs.map((r) => [r.name, r.status, r.conclusion])).toEqual([
      ["ci/test", "completed", "success"],
    ]);
    const second = await actAs.commit(world.emu, owner, repo, "feature", { "a.txt": "2\n" }, "again", {
      as: "hubot",
    });
    await world.emu.idle();
    const { data: again } = await world.as("hubot").rest.checks.listForRef({ owner, repo, ref: second });
    expect(again.total_count).toBe(1);
  });

  it("does not merge while the required check fails", async () => {
    repos.protectBranch(world.emu, owner, repo, "main", { requiredChecks: ["ci/test"] });
    actAs.setCi(world.emu, owner, repo, { context: "ci/test", conclusion: "failure", delayMs: 10 });
    await actAs.commit(world.emu, owner, repo, "feature", { "a.txt": "1\n" }, "c", { as: "hubot" });
    const { data: pr } = await world
      .as("hubot")
      .rest.pulls.create({ owner, repo, head: "feature", base: "main", title: "t" });
    await world.as("hubot").graphql(enable, { id: pr.node_id });
    await world.emu.idle();
    expect(await inspect.getPull(world.emu, owner, repo, pr.number)).toMatchObject({
      merged: false,
      mergeable_state: "blocked",
    });
  });

  it("refuses when the repository does not allow auto-merge or the base is unprotected", async () => {
    await actAs.commit(world.emu, owner, repo, "feature", { "a.txt": "1\n" }, "c", { as: "hubot" });
    const { data: pr } = await world
      .as("hubot")
      .rest.pulls.create({ owner, repo, head: "feature", base: "main", title: "t" });
    await expect(world.as("hubot").graphql(enable, { id: pr.node_id })).rejects.toThrow(
      /Protected branch rules not configured/,
    );
    repos.setRepoSettings(world.emu, owner, repo, { allowAutoMerge: false });
    await expect(world.as("hubot").graphql(enable, { id: pr.node_id })).rejects.toThrow(
      "Auto merge is not allowed for this repository",
    );
  });
});
