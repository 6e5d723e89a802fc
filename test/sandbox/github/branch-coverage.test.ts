/**
 * `protected` on GitHub's branch answers is true for a branch that a ruleset covers even without
 * classic branch protection, while `GET /branches/{b}/protection` still answers 404 "Branch not
 * protected" (https://github.com/hub4j/github-api/issues/2062; a ruleset of any rule is enough,
 * https://github.com/crs-k/stale-branches/issues/1061; "protected" in
 * https://docs.github.com/en/rest/branches/branches#get-a-branch). A client that reads `protected`
 * as "classic protection" takes the wrong path on GitHub, and an emulator that says false hides it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  recordContract,
  type CheckedResponse,
  type ContractFailure,
} from "../../support/github-contract-kit.js";
import { expectStatus, startWorld, type World } from "../../support/github-emulator-world.js";
import { actAs, repos } from "../../../packages/sandbox/src/github/index.js";

describe("a branch covered only by a ruleset", () => {
  let world: World;
  const checked: CheckedResponse[] = [];
  const failures: ContractFailure[] = [];
  const owner = "acme";
  const repo = "config";

  beforeAll(async () => {
    world = await startWorld();
    await actAs.commit(world.emu, owner, repo, "main", { "x.txt": "x\n" }, "x", { as: "mona" });
    const { data: main } = await world.as("mona").rest.git.getRef({ owner, repo, ref: "heads/main" });
    await world
      .as("mona")
      .rest.git.createRef({ owner, repo, ref: "refs/heads/release", sha: main.object.sha });
    await world.as("mona").rest.git.createRef({ owner, repo, ref: "refs/heads/topic", sha: main.object.sha });
    repos.addRuleset(world.emu, owner, repo, {
      name: "release",
      branches: ["release"],
      requiredChecks: ["ci"],
    });
    repos.protectBranch(world.emu, owner, repo, "main", { requiredChecks: ["ci"] });
  });
  afterAll(async () => {
    await world.emu.close();
  });

  it("reads protected: true in GET /branches/{b}, in the list and under ?protected=true; its protection endpoint answers 404", async () => {
    const mona = world.as("mona");
    recordContract(mona, checked, failures);
    const { data: release } = await mona.rest.repos.getBranch({ owner, repo, branch: "release" });
    expect(release.protected).toBe(true);
    // Classic protection is what the branch's `protection` describes: none here.
    expect(release.protection.enabled).toBe(false);
    const { data: topic } = await mona.rest.repos.getBranch({ owner, repo, branch: "topic" });
    expect(topic.protected).toBe(false);
    const { data: listed } = await mona.rest.repos.listBranches({ owner, repo });
    expect(Object.fromEntries(listed.map((b) => [b.name, b.protected]))).toEqual({
      main: true,
      release: true,
      topic: false,
    });
    const { data: onlyProtected } = await mona.rest.repos.listBranches({ owner, repo, protected: true });
    expect(onlyProtected.map((b) => b.name).sort()).toEqual(["main", "release"]);
    const refused = await expectStatus(
      mona.rest.repos.getBranchProtection({ owner, repo, branch: "release" }),
      404,
    );
    expect(refused.message).toBe("Branch not protected");
    expect(checked.length).toBeGreaterThanOrEqual(4);
    expect(failures).toEqual([]);
  });
});
