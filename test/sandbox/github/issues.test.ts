import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectStatus, installApp, startWorld, type World } from "../../support/github-emulator-world.js";
import { actAs, inspect } from "../../../packages/sandbox/src/github/index.js";

const owner = "acme";
const repo = "config";

describe("issues, comments, reactions and labels", () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(async () => {
    await world.emu.close();
  });

  it("lists issues by label (all labels must match) and state", async () => {
    const octokit = world.as("mona");
    await octokit.rest.issues.create({ owner, repo, title: "both", labels: ["ferry", "env:prod"] });
    await octokit.rest.issues.create({ owner, repo, title: "one", labels: ["ferry"] });
    const { data: closed } = await octokit.rest.issues.create({
      owner,
      repo,
      title: "closed",
      labels: ["ferry", "env:prod"],
    });
    await octokit.rest.issues.update({ owner, repo, issue_number: closed.number, state: "closed" });
    const titles = async (labels: string, state: "open" | "closed" | "all") =>
      (await octokit.rest.issues.listForRepo({ owner, repo, labels, state })).data.map((i) => i.title).sort();
    expect(await titles("ferry,env:prod", "open")).toEqual(["both"]);
    expect(await titles("ferry", "open")).toEqual(["both", "one"]);
    expect(await titles("ferry,env:prod", "all")).toEqual(["both", "closed"]);
  });

  it("pages comments with per_page and Link rel=next/last", async () => {
    const octokit = world.as("mona");
    const { data: issue } = await octokit.rest.issues.create({ owner, repo, title: "chatty" });
    for (let i = 0; i < 7; i++)
      await octokit.rest.issues.createComment({ owner, repo, issue_number: issue.number, body: `c${i}` });
    const page = await octokit.rest.issues.listComments({
      owner,
      repo,
      issue_number: issue.number,
      per_page: 3,
      page: 2,
    });
    expect(page.data.map((c) => c.body)).toEqual(["c3", "c4", "c5"]);
    expect(page.headers.link).toContain('rel="next"');
    expect(page.headers.link).toContain('rel="prev"');
    const all = await octokit.paginate(octokit.rest.issues.listComments, {
      owner,
      repo,
      issue_number: issue.number,
      per_page: 3,
    });
    expect(all.map((c) => c.body)).toEqual(["c0", "c1", "c2", "c3", "c4", "c5", "c6"]);
  });

  it("answers 201 for a new reaction and 200 for the same reaction again", async () => {
    const { data: issue } = await world.as("mona").rest.issues.create({ owner, repo, title: "react" });
    const { id } = await actAs.comment(world.emu, owner, repo, issue.number, "/promote prod", { as: "eve" });
    const first = await world
      .as("hubot")
      .rest.reactions.createForIssueComment({ owner, repo, comment_id: id, content: "eyes" });
    const again = await world
      .as("hubot")
      .rest.reactions.createForIssueComment({ owner, repo, comment_id: id, content: "eyes" });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.data.id).toBe(first.data.id);
    await expectStatus(
      world
        .as("hubot")
        .rest.reactions.createForIssueComment({ owner, repo, comment_id: id, content: "party" as "eyes" }),
      422,
    );
    const { data: list } = await world
      .as("eve")
      .rest.reactions.listForIssueComment({ owner, repo, comment_id: id });
    expect(list.map((r) => [r.user?.login, r.content])).toEqual([["hubot", "eyes"]]);
  });

  it("lets the author edit a comment but not someone without write access", async () => {
    const { data: issue } = await world.as("mona").rest.issues.create({ owner, repo, title: "edits" });
    const { data: comment } = await world
      .as("hubot")
      .rest.issues.createComment({ owner, repo, issue_number: issue.number, body: "mine" });
    await expectStatus(
      world.as("eve").rest.issues.updateComment({ owner, repo, comment_id: comment.id, body: "eve's now" }),
      403,
    );
    const { data: edited } = await world
      .as("hubot")
      .rest.issues.updateComment({ owner, repo, comment_id: comment.id, body: "still mine" });
    expect(edited.body).toBe("still mine");
  });

  it("refuses to create an existing label and removes a label from an issue", async () => {
    const octokit = world.as("mona");
    await octokit.rest.issues.createLabel({ owner, repo, name: "hold", color: "ff0000" });
    await expectStatus(octokit.rest.issues.createLabel({ owner, repo, name: "HOLD" }), 422);
    const { data: issue } = await octokit.rest.issues.create({
      owner,
      repo,
      title: "held",
      labels: ["hold", "ferry"],
    });
    const { data: left } = await octokit.rest.issues.removeLabel({
      owner,
      repo,
      issue_number: issue.number,
      name: "hold",
    });
    expect(left.map((l) => l.name)).toEqual(["ferry"]);
    await expectStatus(
      octokit.rest.issues.removeLabel({ owner, repo, issue_number: issue.number, name: "hold" }),
      404,
    );
  });
});

describe("check runs, statuses and deployments", () => {
  let world: World;
  let head: string;
  beforeAll(async () => {
    world = await startWorld();
    head = (await inspect.branchSha(world.emu, owner, repo, "main"))!;
  });
  afterAll(async () => {
    await world.emu.close();
  });

  it("combines commit statuses: latest per context, failure wins, pending without any", async () => {
    const octokit = world.as("hubot");
    expect((await octokit.rest.repos.getCombinedStatusForRef({ owner, repo, ref: "main" })).data.state).toBe(
      "pending",
    );
    await octokit.rest.repos.createCommitStatus({
      owner,
      repo,
      sha: head,
      state: "failure",
      context: "ci/test",
    });
    await octokit.rest.repos.createCommitStatus({
      owner,
      repo,
      sha: head,
      state: "success",
      context: "lint",
    });
    expect((await octokit.rest.repos.getCombinedStatusForRef({ owner, repo, ref: "main" })).data.state).toBe(
      "failure",
    );
    await octokit.rest.repos.createCommitStatus({
      owner,
      repo,
      sha: head,
      state: "success",
      context: "ci/test",
    });
    const { data } = await octokit.rest.repos.getCombinedStatusForRef({ owner, repo, ref: "main" });
    expect([data.state, data.total_count]).toEqual(["success", 2]);
  });

  it("refuses a deployment while a status on the commit is not green, unless required_contexts says otherwise", async () => {
    const octokit = world.as("hubot");
    const sha = await actAs.commit(world.emu, owner, repo, "deploy-me", { "d.txt": "d\n" }, "d", {
      as: "hubot",
    });
    actAs.setStatus(world.emu, owner, repo, sha, { context: "ci/test", state: "pending" });
    const refused = await expectStatus(
      octokit.rest.repos.createDeployment({ owner, repo, ref: sha, environment: "prod" }),
      409,
    );
    expect(refused.message).toMatch(/Commit status checks failed/);
    const { data } = await octokit.rest.repos.createDeployment({
      owner,
      repo,
      ref: sha,
      environment: "prod",
      required_contexts: [],
    });
    expect("id" in data && data.sha).toBe(sha);
  });

  it("marks the previous successful deployment inactive and filters deployments by environment", async () => {
    const octokit = world.as("hubot");
    const deploy = async (environment: string) => {
      const { data } = await octokit.rest.repos.createDeployment({
        owner,
        repo,
        ref: head,
        environment,
        required_contexts: [],
      });
      if (!("id" in data)) throw new Error("no deployment");
      await octokit.rest.repos.createDeploymentStatus({
        owner,
        repo,
        deployment_id: data.id,
        state: "success",
      });
      return data.id;
    };
    const first = await deploy("staging");
    const second = await deploy("staging");
    await deploy("qa");
    const { data: statuses } = await octokit.rest.repos.listDeploymentStatuses({
      owner,
      repo,
      deployment_id: first,
    });
    expect(statuses.map((s) => s.state)).toEqual(["inactive", "success"]);
    const { data: staging } = await octokit.rest.repos.listDeployments({
      owner,
      repo,
      environment: "staging",
    });
    expect(staging.map((d) => d.id)).toEqual([second, first]);
  });

  it("lets only the app that created a check run change it, and lists the latest run per name", async () => {
    const one = await installApp(world, { slug: "one" });
    const two = await installApp(world, { slug: "two" });
    const { data: run } = await one.installation.rest.checks.create({
      owner,
      repo,
      name: "ferry/config",
      head_sha: head,
      status: "in_progress",
    });
    await expectStatus(
      two.installation.rest.checks.update({ owner, repo, check_run_id: run.id, conclusion: "success" }),
      403,
    );
    await one.installation.rest.checks.create({
      owner,
      repo,
      name: "ferry/config",
      head_sha: head,
      conclusion: "failure",
      output: { title: "bad", summary: "bad config" },
    });
    const { data } = await one.installation.rest.checks.listForRef({
      owner,
      repo,
      ref: head,
      check_name: "ferry/config",
    });
    expect(data.check_runs.map((r) => r.conclusion)).toEqual(["failure"]);
    const { data: all } = await one.installation.rest.checks.listForRef({
      owner,
      repo,
      ref: head,
      check_name: "ferry/config",
      filter: "all",
    });
    expect(all.total_count).toBe(2);
  });
});
