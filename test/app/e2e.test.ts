/**
 * End to end: the real app (Probot, signed webhooks, `startFerryServer`) against the GitHub
 * emulator and the embedded OCI registry. Nothing is faked at a port here.
 */
import { Octokit } from "@octokit/rest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseBody } from "../../src/core/pr/body.js";
import { startWorld, type World } from "../support/app-e2e-world.js";
import { accounts, actAs, inspect, repos } from "../../src/sandbox/github/index.js";

describe("Ferry end to end (Probot + GitHub emulator + embedded registry)", { timeout: 30_000 }, () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  describe("with CI that passes", () => {
    beforeEach(async () => {
      world = await startWorld({ ci: true, server: { status: { token: "e2e-status-token" } } });
    });

    it("turns a push of shop:1.8.0 into exactly one staging PR that auto-merges once its check passes", async () => {
      await world.push("1.8.0");
      const pulls = await world.pulls();
      expect(pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);
      const { data: files } = await world.as.mona.rest.pulls.listFiles({
        owner: "acme",
        repo: "config",
        pull_number: pulls[0]!.number,
      });
      expect(files.map((file) => [file.filename, file.additions, file.deletions])).toEqual([
        ["overlays/staging/kustomization.yaml", 1, 1],
      ]);
      expect(pulls[0]!.merged_at).not.toBeNull();
      expect(
        await inspect.readFile(world.emu, "acme", "config", "main", "overlays/staging/kustomization.yaml"),
      ).toContain('newTag: "1.8.0"');
      const status = (await (
        await fetch(`${world.server.url}/status`, { headers: { authorization: "Bearer e2e-status-token" } })
      ).json()) as Record<string, { running: Record<string, Record<string, { tag?: string }>> }>;
      expect(status["acme/config"]?.running.staging?.shop?.tag).toBe("1.8.0");
    });

    it("/promote prod by a maintainer opens the prod PR with the digest staging runs", async () => {
      const digest = await world.push("1.8.0");
      const issue = await world.openIssue();
      const { data: comment } = await world.as.mona.rest.issues.createComment({
        owner: "acme",
        repo: "config",
        issue_number: issue,
        body: "/promote prod",
      });
      await world.settle();
      const prod = (await world.pulls("open")).filter((pull) => pull.head.ref === "ferry/prod");
      expect(prod).toHaveLength(1);
      expect(parseBody(prod[0]!.body)?.changes[0]?.to).toEqual({ tag: "1.8.0", digest });
      const { data: reactions } = await world.as.mona.rest.reactions.listForIssueComment({
        owner: "acme",
        repo: "config",
        comment_id: comment.id,
      });
      expect(reactions.map((reaction) => reaction.content).sort()).toEqual(["eyes", "rocket"]);
    });

    it("/promote prod on a running server opens the prod PR within 8 GitHub requests, and links it to the issue instead of replying", async () => {
      await world.push("1.8.0");
      const issue = await world.openIssue();
      await world.settle();
      // Only the comment is delivered: the CI and pull_request events the new PR sets off are another flow.
      world.onlyEvents(["issue_comment"]);
      const start = world.emu.requests().length;
      const { data: comment } = await world.as.mona.rest.issues.createComment({
        owner: "acme",
        repo: "config",
        issue_number: issue,
        body: "/promote prod",
      });
      await world.settle();
      const requests = world
        .appRequests(start)
        .map((request) => `${request.method} ${request.path.split("?")[0]}`);
      const opened = requests.findIndex((request) => request === "POST /repos/acme/config/pulls");
      const labelled = requests.findIndex(
        (request, index) =>
          index > opened && /^POST \/repos\/acme\/config\/issues\/\d+\/labels$/.test(request),
      );
      expect(opened).toBeGreaterThan(0);
      expect(labelled + 1).toBeLessThanOrEqual(8);
      // After the PR: the 🚀, and no reply comment (the PR body says where it was requested).
      expect(requests.slice(labelled + 1)).toEqual([
        `POST /repos/acme/config/issues/comments/${comment.id}/reactions`,
      ]);
      const prod = (await world.pulls("open")).find((pull) => pull.head.ref === "ferry/prod")!;
      expect(prod.body).toContain(`Requested in #${issue}.`);
    });

    it("/promote prod by an outsider, a bot or in an edited comment changes nothing and says why", async () => {
      await world.push("1.8.0");
      const issue = await world.openIssue();
      const before = world.emu.requests().length;
      await world.as.eve.rest.issues.createComment({
        owner: "acme",
        repo: "config",
        issue_number: issue,
        body: "/promote prod",
      });
      // A bot with admin rights is still not a person: ignored without a reaction or reply.
      const bot = accounts.createUser(world.emu, "release-bot", { type: "Bot" });
      repos.setCollaborator(world.emu, "acme", "config", "release-bot", "admin");
      await new Octokit({
        baseUrl: world.emu.apiUrl,
        auth: bot.token,
        request: { retries: 0 },
      }).rest.issues.createComment({
        owner: "acme",
        repo: "config",
        issue_number: issue,
        body: "/promote prod",
      });
      const { data: harmless } = await world.as.hubot.rest.issues.createComment({
        owner: "acme",
        repo: "config",
        issue_number: issue,
        body: "looks good",
      });
      await world.as.hubot.rest.issues.updateComment({
        owner: "acme",
        repo: "config",
        comment_id: harmless.id,
        body: "/promote prod",
      });
      await world.settle();
      expect((await world.pulls()).filter((pull) => pull.head.ref === "ferry/prod")).toHaveLength(0);
      const { data: comments } = await world.as.mona.rest.issues.listComments({
        owner: "acme",
        repo: "config",
        issue_number: issue,
      });
      expect(comments.map((comment) => comment.body).filter((body) => body?.startsWith("@"))).toEqual([
        expect.stringMatching(/^@eve you need maintain permission to change prod/),
      ]);
      expect(world.emu.requests().length).toBeGreaterThan(before);
    });

    it("a redelivered comment webhook changes nothing", async () => {
      await world.push("1.8.0");
      const issue = await world.openIssue();
      await world.as.mona.rest.issues.createComment({
        owner: "acme",
        repo: "config",
        issue_number: issue,
        body: "/promote prod",
      });
      await world.settle();
      const pullsBefore = await world.pulls();
      const { data: commentsBefore } = await world.as.mona.rest.issues.listComments({
        owner: "acme",
        repo: "config",
        issue_number: issue,
      });
      const delivery = world.emu.webhooks
        .deliveries()
        .find((d) => d.event === "issue_comment" && d.action === "created")!;
      world.emu.webhooks.redeliver(delivery.id);
      await world.settle();
      expect(await world.pulls()).toEqual(pullsBefore);
      const { data: commentsAfter } = await world.as.mona.rest.issues.listComments({
        owner: "acme",
        repo: "config",
        issue_number: issue,
      });
      expect(commentsAfter.length).toBe(commentsBefore.length);
    });

    it("/rollback staging restores the previous version and holds staging until /unhold", async () => {
      await world.push("1.8.0");
      const issue = await world.openIssue();
      await world.as.mona.rest.issues.createComment({
        owner: "acme",
        repo: "config",
        issue_number: issue,
        body: "/rollback staging",
      });
      await world.settle();
      expect(
        await inspect.readFile(world.emu, "acme", "config", "main", "overlays/staging/kustomization.yaml"),
      ).toContain('newTag: "1.7.0"');
      await world.push("1.8.1");
      expect((await world.pulls()).filter((pull) => pull.title.includes("1.8.1"))).toHaveLength(0);
      await world.as.mona.rest.issues.createComment({
        owner: "acme",
        repo: "config",
        issue_number: issue,
        body: "/unhold staging",
      });
      await world.settle();
      await world.server.scanNow();
      await world.settle();
      expect((await world.pulls()).map((pull) => pull.title)).toContain("Promote shop 1.8.1 to staging");
    });
  });

  it("refuses a command on the merged staging PR", async () => {
    world = await startWorld({ ci: true });
    await world.push("1.8.0");
    const merged = (await world.pulls())[0]!.number;
    await world.as.mona.rest.issues.createComment({
      owner: "acme",
      repo: "config",
      issue_number: merged,
      body: "/promote prod",
    });
    await world.settle();
    expect((await world.pulls()).filter((pull) => pull.head.ref === "ferry/prod")).toHaveLength(0);
  });

  it("CI gating: a tag whose source revision has no successful CI is not proposed until the source repo's workflow run succeeds", async () => {
    world = await startWorld({ ci: false, source: true });
    const revision = (await inspect.branchSha(world.emu, "acme", "shop", "main"))!;
    await world.push("1.8.0", { "org.opencontainers.image.revision": revision });
    expect(await world.pulls()).toEqual([]);

    // A failed run changes nothing; its successful re-run (workflow_run + check_suite) makes 1.8.0 eligible.
    await actAs.completeWorkflowRun(world.emu, "acme", "shop", revision, "failure");
    await world.settle();
    expect(await world.pulls()).toEqual([]);
    await actAs.completeWorkflowRun(world.emu, "acme", "shop", revision, "success");
    await world.settle();
    const pulls = await world.pulls();
    expect(pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);
    expect(parseBody(pulls[0]!.body)?.changes[0]?.revision).toBe(revision);
    expect(pulls[0]!.body).toContain(`/acme/shop/commit/${revision}`);
  });

  describe("with CI that never reports", () => {
    beforeEach(async () => {
      world = await startWorld({ ci: false });
    });

    it("creates the Ferry dashboard on the first scan and pins it with GraphQL pinIssue; a second scan leaves it untouched", async () => {
      await world.server.scanNow();
      await world.settle();
      const { data: issues } = await world.as.mona.rest.issues.listForRepo({
        owner: "acme",
        repo: "config",
        state: "all",
      });
      const dashboards = issues.filter((issue) => issue.title === "Ferry dashboard");
      expect(dashboards).toHaveLength(1);
      expect(world.emu.findRepo("acme", "config")!.pinnedIssues).toEqual([dashboards[0]!.number]);
      expect(
        world.emu.webhooks
          .deliveries()
          .some((delivery) => delivery.event === "issues" && delivery.action === "pinned"),
      ).toBe(true);

      const mark = world.emu.requests().length;
      await world.server.scanNow();
      await world.settle();
      const writes = world
        .appRequests(mark)
        .filter((request) => request.method !== "GET" && !request.path.includes("/access_tokens"));
      expect(writes).toEqual([]);
    });

    it("updates the same PR when 1.8.1 arrives before 1.8.0 merged", async () => {
      await world.push("1.8.0");
      await world.push("1.8.1");
      const pulls = await world.pulls();
      expect(pulls.map((pull) => [pull.title, pull.state])).toEqual([
        ["Promote shop 1.8.1 to staging", "open"],
      ]);
      const { data: files } = await world.as.mona.rest.pulls.listFiles({
        owner: "acme",
        repo: "config",
        pull_number: pulls[0]!.number,
      });
      expect(files.map((file) => [file.filename, file.additions, file.deletions])).toEqual([
        ["overlays/staging/kustomization.yaml", 1, 1],
      ]);
    });
  });
});
