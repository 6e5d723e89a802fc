import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { expectStatus, installApp, startWorld, type World } from "../../support/github-emulator-world.js";
import { validateRestResponse } from "../../support/github-contract-kit.js";
import { actAs } from "../../../packages/sandbox/src/github/index.js";
import { setApiCommitsSigned } from "../../../packages/sandbox/src/github/commit-signing.js";

const owner = "acme";
const repo = "config";

// Repository rulesets as GitHub documents them: the REST endpoints
// (https://docs.github.com/en/rest/repos/rules), their conditions (`~ALL`, `~DEFAULT_BRANCH`,
// fnmatch, "About rulesets"), bypass actors, and the rules GitHub applies to a ref write
// ("Available rules for rulesets"), refused with 422 "Repository rule violations found\n\n…".
describe("repository rulesets", () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.emu.close();
  });

  async function mainSha(): Promise<string> {
    const { data } = await world.as("mona").rest.git.getRef({ owner, repo, ref: "heads/main" });
    return data.object.sha;
  }

  it("creates, reads, updates and deletes a ruleset with GitHub's shapes; only admins may write", async () => {
    const body = {
      owner,
      repo,
      name: "ferry branches",
      target: "branch" as const,
      enforcement: "active" as const,
      conditions: { ref_name: { include: ["refs/heads/ferry/**"], exclude: [] } },
      rules: [{ type: "creation" as const }],
      bypass_actors: [{ actor_id: 5, actor_type: "RepositoryRole" as const, bypass_mode: "always" as const }],
    };
    await expectStatus(world.as("hubot").rest.repos.createRepoRuleset(body), 403);
    const created = await world.as("mona").rest.repos.createRepoRuleset(body);
    expect(created.status).toBe(201);
    expect(validateRestResponse("POST", "/repos/{owner}/{repo}/rulesets", 201, created.data)?.errors).toEqual(
      [],
    );
    expect(created.data).toMatchObject({
      name: "ferry branches",
      source_type: "Repository",
      source: "acme/config",
      enforcement: "active",
      current_user_can_bypass: "always",
      rules: [{ type: "creation" }],
    });
    const id = created.data.id;
    const read = await world.as("hubot").rest.repos.getRepoRuleset({ owner, repo, ruleset_id: id });
    expect(read.data.current_user_can_bypass).toBe("never");
    expect(
      validateRestResponse("GET", "/repos/{owner}/{repo}/rulesets/{ruleset_id}", 200, read.data)?.errors,
    ).toEqual([]);
    const list = await world.as("eve").rest.repos.getRepoRulesets({ owner, repo });
    expect(list.data.map((x) => x.id)).toEqual([id]);
    expect(validateRestResponse("GET", "/repos/{owner}/{repo}/rulesets", 200, list.data)?.errors).toEqual([]);
    await expectStatus(
      world.as("hubot").rest.repos.updateRepoRuleset({ owner, repo, ruleset_id: id, name: "x" }),
      403,
    );
    const updated = await world
      .as("mona")
      .rest.repos.updateRepoRuleset({ owner, repo, ruleset_id: id, enforcement: "disabled" });
    expect(updated.data).toMatchObject({ enforcement: "disabled", name: "ferry branches" });
    await expectStatus(
      world
        .as("mona")
        .rest.repos.createRepoRuleset({ ...body, rules: [{ type: "no_such_rule" as "creation" }] }),
      422,
    );
    await world.as("mona").rest.repos.deleteRepoRuleset({ owner, repo, ruleset_id: id });
    await expectStatus(world.as("mona").rest.repos.getRepoRuleset({ owner, repo, ruleset_id: id }), 404);
  });

  it("applies rules by ref name: ~ALL, ~DEFAULT_BRANCH, fnmatch includes and excludes, active only", async () => {
    const mona = world.as("mona");
    const add = (include: string[], exclude: string[], enforcement: "active" | "evaluate" = "active") =>
      mona.rest.repos.createRepoRuleset({
        owner,
        repo,
        name: include.join(","),
        enforcement,
        conditions: { ref_name: { include, exclude } },
        rules: [{ type: "deletion" }],
      });
    await add(["~ALL"], ["refs/heads/ferry/*"]);
    await add(["~DEFAULT_BRANCH"], []);
    await add(["refs/heads/ferry/**"], []);
    await add(["refs/heads/release-?"], [], "evaluate");
    const ids = async (branch: string) =>
      [
        ...new Set(
          (await mona.rest.repos.getBranchRules({ owner, repo, branch })).data.map((r) => r.ruleset_id),
        ),
      ].length;
    expect(await ids("main")).toBe(2);
    expect(await ids("feature")).toBe(1);
    // `ferry/*` excludes ferry/prod from ~ALL; `ferry/**` includes it (and deeper names).
    expect(await ids("ferry/prod")).toBe(1);
    expect(await ids("ferry/a/b")).toBe(2);
    expect(await ids("release-1")).toBe(1);
    const rules = await mona.rest.repos.getBranchRules({ owner, repo, branch: "ferry/prod" });
    expect(
      validateRestResponse("GET", "/repos/{owner}/{repo}/rules/branches/{branch}", 200, rules.data)?.errors,
    ).toEqual([]);
    expect(rules.data[0]).toMatchObject({
      type: "deletion",
      ruleset_source_type: "Repository",
      ruleset_source: "acme/config",
    });
  });

  it("refuses a restricted creation with GitHub's text, and lets a bypassing app through", async () => {
    const ferry = await installApp(world);
    const other = await installApp(world, { slug: "other" });
    await world.as("mona").rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "no new branches",
      enforcement: "active",
      conditions: { ref_name: { include: ["~ALL"], exclude: [] } },
      rules: [{ type: "creation" }],
      bypass_actors: [{ actor_id: ferry.appId, actor_type: "Integration", bypass_mode: "always" }],
    });
    const sha = await mainSha();
    const refused = await expectStatus(
      other.installation.rest.git.createRef({ owner, repo, ref: "refs/heads/ferry/prod", sha }),
      422,
    );
    expect(refused.message).toContain(
      "Repository rule violations found\n\nCannot create ref due to creations being restricted.",
    );
    await ferry.installation.rest.git.createRef({ owner, repo, ref: "refs/heads/ferry/prod", sha });
  });

  it("refuses merge commits under required_linear_history and unsigned commits under required_signatures", async () => {
    const ferry = await installApp(world);
    const gh = ferry.installation.rest;
    await world.as("mona").rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "linear and signed",
      enforcement: "active",
      conditions: { ref_name: { include: ["~ALL"], exclude: [] } },
      rules: [{ type: "required_linear_history" }, { type: "required_signatures" }],
    });
    const base = await mainSha();
    const { data: baseCommit } = await gh.git.getCommit({ owner, repo, commit_sha: base });
    // The app's commits through the Git Data API are signed by GitHub.
    const one = await gh.git.createCommit({
      owner,
      repo,
      message: "one",
      tree: baseCommit.tree.sha,
      parents: [base],
    });
    expect(one.data.verification).toMatchObject({ verified: true, reason: "valid" });
    await gh.git.createRef({ owner, repo, ref: "refs/heads/ferry/prod", sha: one.data.sha });
    await actAs.commit(world.emu, owner, repo, "main", { "x.txt": "x\n" }, "x", { as: "mona" });
    const merge = await gh.git.createCommit({
      owner,
      repo,
      message: "merge",
      tree: baseCommit.tree.sha,
      parents: [await mainSha(), one.data.sha],
    });
    const refused = await expectStatus(
      gh.git.updateRef({ owner, repo, ref: "heads/ferry/prod", sha: merge.data.sha }),
      422,
    );
    expect(refused.message).toContain(
      "Repository rule violations found\n\nThis branch must not contain merge commits.",
    );
    expect(refused.message).toContain(merge.data.sha);
    // Switched off, the same request makes an unsigned commit, which the rule refuses.
    setApiCommitsSigned(world.emu.repo(owner, repo), false);
    const unsigned = await gh.git.createCommit({
      owner,
      repo,
      message: "two",
      tree: baseCommit.tree.sha,
      parents: [one.data.sha],
    });
    expect(unsigned.data.verification).toMatchObject({ verified: false, reason: "unsigned" });
    const again = await expectStatus(
      gh.git.updateRef({ owner, repo, ref: "heads/ferry/prod", sha: unsigned.data.sha }),
      422,
    );
    expect(again.message).toContain("Commits must have verified signatures.\nFound 1 violation:");
  });

  it("refuses direct updates under pull_request, and force pushes under non_fast_forward", async () => {
    const mona = world.as("mona");
    const created = await mona.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "main",
      enforcement: "active",
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
      rules: [{ type: "pull_request" }, { type: "non_fast_forward" }],
    });
    const base = await mainSha();
    const { data: c } = await mona.rest.git.getCommit({ owner, repo, commit_sha: base });
    const next = await mona.rest.git.createCommit({
      owner,
      repo,
      message: "n",
      tree: c.tree.sha,
      parents: [base],
    });
    const refused = await expectStatus(
      mona.rest.git.updateRef({ owner, repo, ref: "heads/main", sha: next.data.sha }),
      422,
    );
    expect(refused.message).toBe(
      "Repository rule violations found\n\nChanges must be made through a pull request.\n\n",
    );
    await mona.rest.repos.updateRepoRuleset({
      owner,
      repo,
      ruleset_id: created.data.id,
      rules: [{ type: "non_fast_forward" }],
    });
    await mona.rest.git.updateRef({ owner, repo, ref: "heads/main", sha: next.data.sha });
    const back = await expectStatus(
      mona.rest.git.updateRef({ owner, repo, ref: "heads/main", sha: base, force: true }),
      422,
    );
    expect(back.message).toContain("Cannot force-push to this branch.");
  });

  // "Require branches to be up to date before merging" as a ruleset's
  // strict_required_status_checks_policy; update-branch merges the base into the head
  // (https://docs.github.com/en/rest/pulls/pulls#update-a-pull-request-branch), a merge commit
  // that required_linear_history on the head branch refuses.
  it("holds a PR behind a strict ruleset base, and update-branch brings it up to date unless linear history applies", async () => {
    const mona = world.as("mona");
    await mona.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "strict main",
      enforcement: "active",
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
      rules: [
        {
          type: "required_status_checks",
          parameters: { strict_required_status_checks_policy: true, required_status_checks: [] },
        },
      ],
    });
    await actAs.commit(world.emu, owner, repo, "feature", { "f.txt": "f\n" }, "f", { as: "hubot" });
    const number = await actAs.openPullRequest(world.emu, owner, repo, { head: "feature", as: "hubot" });
    await actAs.commit(world.emu, owner, repo, "main", { "m.txt": "m\n" }, "m", { as: "mona" });
    const read = async () => (await mona.rest.pulls.get({ owner, repo, pull_number: number })).data;
    expect((await read()).mergeable_state).toBe("behind");
    // Merging it is refused while it is behind (https://docs.github.com/en/rest/pulls/pulls#merge-a-pull-request:
    // 405 "if merge cannot be performed").
    const behind = await expectStatus(
      mona.rest.pulls.merge({ owner, repo, pull_number: number, merge_method: "squash" }),
      405,
    );
    expect(behind.message).toBe("Head branch is out of date. Review and try the merge again.");
    const wrong = await expectStatus(
      mona.rest.pulls.updateBranch({ owner, repo, pull_number: number, expected_head_sha: "0".repeat(40) }),
      422,
    );
    expect(wrong.message).toBe("expected head sha didn't match current head ref.");
    const { data: linear } = await mona.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "linear feature",
      enforcement: "active",
      conditions: { ref_name: { include: ["refs/heads/feature"], exclude: [] } },
      rules: [{ type: "required_linear_history" }],
    });
    const refused = await expectStatus(
      mona.rest.pulls.updateBranch({ owner, repo, pull_number: number }),
      422,
    );
    expect(refused.message).toContain("This branch must not contain merge commits.");
    await mona.rest.repos.deleteRepoRuleset({ owner, repo, ruleset_id: linear.id });
    const updated = await mona.rest.pulls.updateBranch({ owner, repo, pull_number: number });
    expect(updated.status).toBe(202);
    expect(
      validateRestResponse(
        "PUT",
        "/repos/{owner}/{repo}/pulls/{pull_number}/update-branch",
        202,
        updated.data,
      )?.errors,
    ).toEqual([]);
    const after = await read();
    expect(after.mergeable_state).toBe("clean");
    const { data: head } = await mona.rest.git.getCommit({ owner, repo, commit_sha: after.head.sha });
    expect(head.parents).toHaveLength(2);
  });

  // GraphQL updateRefs (https://docs.github.com/en/graphql/reference/mutations#updaterefs, input
  // RefUpdate: beforeOid "The value this ref needs to point to before the update", force "Force a
  // non fast-forward update"): a forced compare-and-swap, judged by the rulesets as any ref write.
  it("updateRefs forces a ref only while it is at beforeOid, and the rulesets judge it", async () => {
    const mona = world.as("mona");
    const { data: repository } = await mona.rest.repos.get({ owner, repo });
    const base = await mainSha();
    const first = await actAs.commit(world.emu, owner, repo, "feature", { "a.txt": "a\n" }, "a", {
      as: "mona",
    });
    const other = await actAs.commit(world.emu, owner, repo, "main", { "b.txt": "b\n" }, "b", { as: "mona" });
    expect(other).not.toBe(base);
    const update = (beforeOid: string, force: boolean) =>
      mona.graphql<{ updateRefs: { clientMutationId: string | null } }>(
        `mutation($repositoryId: ID!, $refUpdates: [RefUpdate!]!) { updateRefs(input: { repositoryId: $repositoryId, refUpdates: $refUpdates }) { clientMutationId } }`,
        {
          repositoryId: repository.node_id,
          refUpdates: [{ name: "refs/heads/feature", afterOid: other, beforeOid, force }],
        },
      );
    const refusal = async (promise: Promise<unknown>): Promise<string> => {
      try {
        await promise;
      } catch (error) {
        return (error as { errors?: { message: string }[] }).errors?.[0]?.message ?? String(error);
      }
      throw new Error("expected a GraphQL error");
    };
    expect(await refusal(update(first, false))).toBe("Update is not a fast forward");
    expect(await refusal(update(base, true))).toBe("Reference update failed");
    const { data: blocked } = await mona.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "no force pushes",
      enforcement: "active",
      conditions: { ref_name: { include: ["~ALL"], exclude: [] } },
      rules: [{ type: "non_fast_forward" }],
    });
    expect(await refusal(update(first, true))).toContain(
      "Repository rule violations found\n\nCannot force-push to this branch.",
    );
    await mona.rest.repos.deleteRepoRuleset({ owner, repo, ruleset_id: blocked.id });
    await update(first, true);
    const { data: moved } = await mona.rest.git.getRef({ owner, repo, ref: "heads/feature" });
    expect(moved.object.sha).toBe(other);
  });
});
