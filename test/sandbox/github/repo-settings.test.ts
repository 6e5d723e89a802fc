/**
 * `PATCH /repos/{owner}/{repo}` as GitHub answers it
 * (https://docs.github.com/en/rest/repos/repos#update-a-repository): an admin changes merge
 * methods, issues, auto-merge and branch deletion and gets the repository back; anyone else with
 * access gets 403 "Must have admin rights to Repository.", someone who cannot see a private
 * repository 404; an app needs `administration: write`; a state with no merge method left is
 * refused with GitHub's 422 ("Sorry, you need to allow at least one merge strategy.
 * (no_merge_method)").
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  recordContract,
  type CheckedResponse,
  type ContractFailure,
} from "../../support/github-contract-kit.js";
import { expectStatus, installApp, startWorld, type World } from "../../support/github-emulator-world.js";

const owner = "acme";
const repo = "config";

describe("PATCH /repos/{owner}/{repo}", () => {
  let world: World;
  afterEach(async () => {
    await world.emu.close();
  });

  it("lets an admin change the settings it models, answering with the repository as GitHub documents it", async () => {
    world = await startWorld();
    const checked: CheckedResponse[] = [];
    const failures: ContractFailure[] = [];
    const mona = world.as("mona");
    recordContract(mona, checked, failures);
    const { data } = await mona.rest.repos.update({
      owner,
      repo,
      allow_merge_commit: false,
      allow_rebase_merge: false,
      allow_squash_merge: true,
      allow_auto_merge: false,
      delete_branch_on_merge: true,
      has_issues: false,
      description: "GitOps config",
    });
    expect(data).toMatchObject({
      allow_merge_commit: false,
      allow_rebase_merge: false,
      allow_squash_merge: true,
      allow_auto_merge: false,
      delete_branch_on_merge: true,
      has_issues: false,
      description: "GitOps config",
    });
    const { data: read } = await world.as("hubot").rest.repos.get({ owner, repo });
    expect(read).toMatchObject({
      allow_merge_commit: false,
      has_issues: false,
      delete_branch_on_merge: true,
    });
    // Issues off: GitHub answers 410 to a new issue.
    await expectStatus(world.as("hubot").rest.issues.create({ owner, repo, title: "x" }), 410);
    expect(checked.map((c) => c.operation)).toContain("repos/update");
    expect(failures).toEqual([]);
  });

  it("refuses everyone but an admin with GitHub's answers", async () => {
    world = await startWorld({ private: true });
    for (const login of ["hubot", "tri"] as const) {
      const refused = await expectStatus(
        world.as(login).rest.repos.update({ owner, repo, has_issues: false }),
        403,
      );
      expect(refused.message).toBe("Must have admin rights to Repository.");
    }
    expect(
      (await expectStatus(world.as("eve").rest.repos.update({ owner, repo, has_issues: false }), 404))
        .message,
    ).toBe("Not Found");
    const app = await installApp(world);
    expect(
      (await expectStatus(app.installation.rest.repos.update({ owner, repo, has_issues: false }), 403))
        .message,
    ).toBe("Resource not accessible by integration");
    const { data } = await world.as("mona").rest.repos.get({ owner, repo });
    expect(data.has_issues).toBe(true);
  });

  it("refuses a change that leaves no merge method, a value of the wrong type, and a field it does not model", async () => {
    world = await startWorld();
    const mona = world.as("mona");
    await mona.rest.repos.update({ owner, repo, allow_rebase_merge: false, allow_merge_commit: false });
    const none = await expectStatus(mona.rest.repos.update({ owner, repo, allow_squash_merge: false }), 422);
    expect(none.message).toBe("Validation Failed");
    const wrongType = await expectStatus(
      mona.request("PATCH /repos/{owner}/{repo}", { owner, repo, has_issues: "yes" as unknown as boolean }),
      422,
    );
    expect(wrongType.message).toBe(
      `Invalid request.\n\nFor 'properties/has_issues', "yes" is not a boolean.`,
    );
    await expectStatus(mona.rest.repos.update({ owner, repo, has_wiki: false }), 422);
    const { data } = await mona.rest.repos.get({ owner, repo });
    expect(data).toMatchObject({ allow_squash_merge: true, has_issues: true });
  });
});
