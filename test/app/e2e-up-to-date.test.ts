/**
 * "Require branches to be up to date before merging" (docs/reliability.md row 75): classic
 * protection's `required_status_checks.strict`, or a ruleset's `required_status_checks` rule with
 * `strict_required_status_checks_policy`
 * (https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-protected-branches/about-protected-branches#require-status-checks-before-merging).
 * Two environments' PRs open on the same base; once the first merges the second is `behind`, and
 * GitHub refuses to merge it ("Head branch is out of date. Review and try the merge again.").
 * Ferry rebuilds it on the new base, as the base's rules allow, and both end up merged.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Octokit } from "@octokit/rest";
import { accounts, inspect, repos } from "../../packages/sandbox/src/github/index.js";
import { shopOverlay } from "../support/app-fakes.js";
import { startWorld, type World } from "../support/app-e2e-world.js";

const owner = "acme";
const repo = "config";

/** staging and qa both follow the registry on their own, each with its own PR. */
function twoEnvironments(registryHost: string): Record<string, string> {
  return {
    ".github/ferry.yml": `images:
  shop:
    repository: ${registryHost}/acme/shop
    policy: { range: "^1.0.0" }
environments:
  staging:
    paths: [overlays/staging]
    update: auto
    merge: auto
  qa:
    paths: [overlays/qa]
    update: auto
    merge: auto
`,
    "overlays/qa/kustomization.yaml": shopOverlay(registryHost, "1.7.0"),
    "overlays/qa/deployment.yaml": "kind: Deployment\n",
  };
}

function admin(world: World): Octokit {
  const user = accounts.createUser(world.emu, "octo-admin");
  repos.setCollaborator(world.emu, owner, repo, user.login, "admin");
  return new Octokit({ baseUrl: world.emu.apiUrl, auth: user.token, request: { retries: 0 } });
}

async function expectBothMerged(world: World): Promise<void> {
  const pulls = await world.pulls("all");
  expect(pulls.filter((pull) => pull.state === "open")).toEqual([]);
  for (const environment of ["staging", "qa"]) {
    // One merged PR each (a sync that planned on the base from before the other merge may open a
    // second, which the next sync closes as already done).
    const merged = pulls.filter(
      (pull) => pull.head.ref === `ferry/${environment}` && pull.merged_at !== null,
    );
    expect(
      merged.map((pull) => pull.title),
      environment,
    ).toEqual([`Promote shop 1.8.0 to ${environment}`]);
    expect(
      await inspect.readFile(world.emu, owner, repo, "main", `overlays/${environment}/kustomization.yaml`),
    ).toContain('newTag: "1.8.0"');
    // Never handed to a person.
    expect(inspect.listComments(world.emu, owner, repo, merged[0]!.number)).toEqual([]);
  }
}

describe("a base that requires branches to be up to date", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("classic protection (strict): the second PR is brought up to date once the first merges, and both merge", async () => {
    world = await startWorld({ ci: true, files: twoEnvironments });
    repos.protectBranch(world.emu, owner, repo, "main", { requiredChecks: ["ci"], strict: true });
    await world.push("1.8.0");
    await expectBothMerged(world);
  });

  it("a ruleset with strict checks and linear history on ~ALL: the second PR is rebuilt on the base with one single-parent commit", async () => {
    world = await startWorld({ ci: true, files: twoEnvironments });
    world.emu.repo(owner, repo).protections.clear();
    repos.setRepoSettings(world.emu, owner, repo, { allowAutoMerge: false });
    await admin(world).rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "strict and linear",
      enforcement: "active",
      conditions: { ref_name: { include: ["~ALL"], exclude: [] } },
      rules: [
        { type: "required_linear_history" },
        {
          type: "required_status_checks",
          parameters: {
            strict_required_status_checks_policy: true,
            required_status_checks: [{ context: "ci" }],
          },
        },
      ],
    });
    await world.push("1.8.0");
    await expectBothMerged(world);
    // No commit on main has two parents: nothing merge-shaped got through.
    const { data: log } = await world.as.mona.rest.repos.listCommits({ owner, repo, sha: "main" });
    expect(log.filter((commit) => commit.parents.length > 1)).toEqual([]);
  });

  it("a ruleset that also blocks force pushes: Ferry says, in the rule's words, what to change", async () => {
    world = await startWorld({ ci: true, files: twoEnvironments });
    world.emu.repo(owner, repo).protections.clear();
    repos.setRepoSettings(world.emu, owner, repo, { allowAutoMerge: false });
    await admin(world).rest.repos.createRepoRuleset({
      owner,
      repo,
      name: "strict, linear, no force pushes",
      enforcement: "active",
      conditions: { ref_name: { include: ["~ALL"], exclude: [] } },
      rules: [
        { type: "required_linear_history" },
        { type: "non_fast_forward" },
        {
          type: "required_status_checks",
          parameters: {
            strict_required_status_checks_policy: true,
            required_status_checks: [{ context: "ci" }],
          },
        },
      ],
    });
    await world.push("1.8.0");
    const open = await world.pulls("open");
    expect(open).toHaveLength(1);
    await world.server.scanNow();
    await world.settle();
    const issues = await world.as.mona.rest.issues.listForRepo({ owner, repo, state: "open" });
    const dashboard = issues.data.find((issue) => issue.title === "Ferry dashboard");
    expect(dashboard?.body).toContain(
      `GitHub's rulesets refused Ferry's write to ${open[0]!.head.ref}: Cannot force-push to this branch.`,
    );
  });
});
