import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "../../support/github-emulator-world.js";

const owner = "acme";
const repo = "config";

describe("the GraphQL operations Ferry uses", () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(async () => {
    await world.emu.close();
  });

  const pin = `mutation($id: ID!) { pinIssue(input: { issueId: $id }) { clientMutationId } }`;

  it("pins up to three issues per repository and refuses a fourth", async () => {
    const octokit = world.as("mona");
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push((await octokit.rest.issues.create({ owner, repo, title: `issue ${i}` })).data.node_id);
    for (const id of ids.slice(0, 3)) await octokit.graphql(pin, { id });
    await octokit.graphql(pin, { id: ids[0] });
    await expect(octokit.graphql(pin, { id: ids[3] })).rejects.toThrow(
      "You can't pin more than 3 issues in a repository.",
    );
    await octokit.graphql(`mutation($id: ID!) { unpinIssue(input: { issueId: $id }) { clientMutationId } }`, {
      id: ids[0],
    });
    await octokit.graphql(pin, { id: ids[3] });
  });

  it("refuses to pin for a user without triage access", async () => {
    const { data } = await world.as("eve").rest.issues.create({ owner, repo, title: "eve's" });
    await expect(world.as("eve").graphql(pin, { id: data.node_id })).rejects.toThrow(/not accessible/);
  });

  it("looks a pull request's node id up by number, with inline arguments", async () => {
    await world.emu.commit(owner, repo, "feature", { "f.txt": "f\n" }, "f", { as: "hubot" });
    const number = await world.emu.openPullRequest(owner, repo, { head: "feature", as: "hubot" });
    const result = await world
      .as("hubot")
      .graphql<{ repository: { pullRequest: { id: string; number: number } } }>(
        `query { repository(owner: "acme", name: "config") { pullRequest(number: ${number}) { id number } } }`,
      );
    expect(result.repository.pullRequest).toMatchObject({
      id: (await world.emu.getPull(owner, repo, number)).node_id,
      number,
    });
  });

  it("answers an unknown node id with a NOT_FOUND error", async () => {
    await expect(
      world
        .as("hubot")
        .graphql(
          `mutation { enablePullRequestAutoMerge(input: {pullRequestId: "PR_nope", mergeMethod: MERGE}) { clientMutationId } }`,
        ),
    ).rejects.toThrow(/Could not resolve to a node/);
  });
});
