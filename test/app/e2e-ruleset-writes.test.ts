/**
 * Repository rulesets on Ferry's own branch writes (docs/reliability.md row 58). GitHub
 * refuses a ref write that breaks a rule with 422 "Repository rule violations found\n\n…"
 * (https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/available-rules-for-rulesets):
 * required linear history refuses Ferry's merge-commit branch updates, required signatures
 * refuses unsigned commits, restricted creation refuses the `ferry/<env>` branch itself.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Octokit } from "@octokit/rest";
import { accounts, actAs, repos } from "../../packages/sandbox/src/github/index.js";
import { dashboards, startWorld, type World } from "../support/app-e2e-world.js";

const owner = "acme";
const repo = "config";

/** A repository admin (rulesets are written by admins only), acting over REST as a user would. */
function admin(world: World): Octokit {
  const user = accounts.createUser(world.emu, "octo-admin");
  repos.setCollaborator(world.emu, owner, repo, user.login, "admin");
  return new Octokit({ baseUrl: world.emu.apiUrl, auth: user.token, request: { retries: 0 } });
}

describe("rulesets on Ferry's branches", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("promotes through linear history and required signatures on ~ALL with single-parent, signed commits", async () => {
    world = await startWorld({ ci: false });
    await admin(world).rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "linear and signed",
      enforcement: "active",
      conditions: { ref_name: { include: ["~ALL"], exclude: [] } },
      rules: [{ type: "required_linear_history" }, { type: "required_signatures" }],
    });
    await world.push("1.8.0");
    const [first] = await world.pulls("open");
    expect(first?.title).toBe("Promote shop 1.8.0 to staging");
    await world.push("1.9.0");
    const [pull] = await world.pulls("open");
    expect(pull?.number).toBe(first!.number);
    expect(pull?.title).toBe("Promote shop 1.9.0 to staging");
    const { data: head } = await world.as.mona.rest.repos.getCommit({ owner, repo, ref: pull!.head.sha });
    // One parent, the branch's previous head (a merge commit would have been refused).
    expect(head.parents.map((parent) => parent.sha)).toEqual([first!.head.sha]);
    expect(head.commit.verification).toMatchObject({ verified: true, reason: "valid" });
    const { data: opened } = await world.as.mona.rest.repos.getCommit({ owner, repo, ref: first!.head.sha });
    expect(opened.commit.verification?.verified).toBe(true);
    actAs.setStatus(world.emu, owner, repo, pull!.head.sha, { context: "ci", state: "success" });
    await world.settle();
    const merged = (await world.pulls("all")).find((candidate) => candidate.number === pull!.number);
    expect(merged?.merged_at).not.toBeNull();
  });

  it("says once on the dashboard, in the rule's words, what to change, and promotes once the ruleset is edited", async () => {
    world = await startWorld({ ci: false });
    const octo = admin(world);
    const { data: ruleset } = await octo.rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "no new ferry branches",
      enforcement: "active",
      conditions: { ref_name: { include: ["refs/heads/ferry/**"], exclude: [] } },
      rules: [{ type: "creation" }],
    });
    await world.push("1.8.0");
    expect(await world.pulls("open")).toEqual([]);
    await world.server.scanNow();
    await world.settle();
    const [dashboard] = await dashboards(world);
    expect(dashboard?.body).toContain(
      // The notices block keeps the text as written (the visible list escapes its Markdown).
      "GitHub's rulesets refused Ferry's write to ferry/staging: Cannot create ref due to creations being restricted. Add the Ferry app to the ruleset's bypass list, or exclude refs/heads/ferry/** from it",
    );
    // Not tried again while nothing changed: a second scan writes no ref and adds no comment.
    const from = world.emu.requests().length;
    await world.server.scanNow();
    await world.settle();
    const writes = world
      .appRequests(from)
      .filter((request) => request.method === "POST" && request.path.includes("/git/refs"));
    expect(writes).toEqual([]);
    expect((await dashboards(world)).length).toBe(1);
    const comments = await world.as.mona.rest.issues.listComments({
      owner,
      repo,
      issue_number: dashboard!.number,
    });
    expect(comments.data).toEqual([]);
    // The admin adds Ferry to the bypass list: the repository_ruleset event brings the PR at once.
    await octo.rest.repos.updateRepoRuleset({
      owner,
      repo,
      ruleset_id: ruleset.id,
      bypass_actors: [{ actor_id: world.appId, actor_type: "Integration", bypass_mode: "always" }],
    });
    await world.settle();
    const [pull] = await world.pulls("open");
    expect(pull?.title).toBe("Promote shop 1.8.0 to staging");
    const [after] = await dashboards(world);
    expect(after?.body).not.toContain("refused Ferry's write");
  });
});
