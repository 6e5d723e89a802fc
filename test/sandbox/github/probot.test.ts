/**
 * A minimal Probot 14 app, unchanged except for `baseUrl`, receives a signed webhook from the
 * emulator and opens a pull request through `context.octokit.rest`.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Probot, createNodeMiddleware, type ApplicationFunction } from "probot";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorld, type World } from "../../support/github-emulator-world.js";
import { UnthrottledOctokit } from "../../../packages/sandbox/src/ferry-app.js";
import { accounts, actAs, inspect } from "../../../packages/sandbox/src/github/index.js";

const owner = "acme";
const repo = "config";

/** On `/bump <tag>`, edits the staging overlay on branch ferry/staging (Git Data API) and opens a PR. */
const bumpApp: ApplicationFunction = (app) => {
  app.on("issue_comment.created", async (context) => {
    const match = /^\/bump (\S+)/m.exec(context.payload.comment.body);
    if (!match) return;
    const tag = match[1]!;
    const { owner: o, repo: r } = context.repo();
    const octokit = context.octokit.rest;
    await octokit.reactions.createForIssueComment({
      owner: o,
      repo: r,
      comment_id: context.payload.comment.id,
      content: "eyes",
    });
    const { data: base } = await octokit.git.getRef({ owner: o, repo: r, ref: "heads/main" });
    const { data: baseCommit } = await octokit.git.getCommit({
      owner: o,
      repo: r,
      commit_sha: base.object.sha,
    });
    const path = "overlays/staging/kustomization.yaml";
    const { data: file } = await octokit.repos.getContent({ owner: o, repo: r, path });
    const text = Buffer.from((file as { content: string }).content, "base64").toString("utf8");
    const { data: tree } = await octokit.git.createTree({
      owner: o,
      repo: r,
      base_tree: baseCommit.tree.sha,
      tree: [{ path, mode: "100644", type: "blob", content: text.replace(/newTag: \S+/, `newTag: ${tag}`) }],
    });
    const { data: commit } = await octokit.git.createCommit({
      owner: o,
      repo: r,
      message: `Promote shop ${tag} to staging`,
      tree: tree.sha,
      parents: [base.object.sha],
    });
    await octokit.git.createRef({ owner: o, repo: r, ref: "refs/heads/ferry/staging", sha: commit.sha });
    const { data: pr } = await octokit.pulls.create({
      owner: o,
      repo: r,
      head: "ferry/staging",
      base: "main",
      title: `Promote shop ${tag} to staging`,
    });
    await octokit.issues.addLabels({
      owner: o,
      repo: r,
      issue_number: pr.number,
      labels: ["ferry", "env:staging"],
    });
  });
};

describe("a Probot 14 app against the emulator", () => {
  let world: World;
  let server: Server;

  beforeAll(async () => {
    world = await startWorld();
    const created = accounts.createApp(world.emu, {
      slug: "ferry",
      permissions: { contents: "write", pull_requests: "write", issues: "write" },
      events: ["issue_comment", "pull_request"],
      webhookSecret: "probot-secret",
    });
    accounts.installApp(world.emu, created.id, owner);
    const probot = new Probot({
      appId: created.id,
      privateKey: created.privateKey,
      secret: "probot-secret",
      baseUrl: world.emu.apiUrl,
      logLevel: "fatal",
      Octokit: UnthrottledOctokit,
    });
    const middleware = await createNodeMiddleware(bumpApp, { probot, webhooksPath: "/api/github/webhooks" });
    server = createServer((req, res) => {
      void middleware(req, res, () => res.writeHead(404).end());
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    accounts.setWebhook(world.emu, created.id, `http://127.0.0.1:${port}/api/github/webhooks`);
  });

  afterAll(async () => {
    await world.emu.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("verifies the emulator's signature, then opens the PR with the app's installation token", async () => {
    const { data: issue } = await world.as("mona").rest.issues.create({ owner, repo, title: "Releases" });
    await actAs.comment(world.emu, owner, repo, issue.number, "/bump 1.8.0", { as: "mona" });
    await world.emu.idle();

    const delivery = world.emu.webhooks.deliveries().find((d) => d.event === "issue_comment");
    expect(delivery?.status).toBe(200);
    const pulls = await inspect.listPulls(world.emu, owner, repo, { state: "open" });
    expect(pulls.map((p) => [p.title, p.user.login, p.head.ref, p.labels.map((l) => l.name)])).toEqual([
      ["Promote shop 1.8.0 to staging", "ferry[bot]", "ferry/staging", ["ferry", "env:staging"]],
    ]);
    expect(
      await inspect.readFile(world.emu, owner, repo, "ferry/staging", "overlays/staging/kustomization.yaml"),
    ).toContain("newTag: 1.8.0");
    expect(inspect.listComments(world.emu, owner, repo, issue.number)[0]?.reactions).toEqual([
      "ferry[bot]:eyes",
    ]);
    expect(
      world.emu.requests().some((r) => r.path.startsWith("/app/installations/") && r.status === 201),
    ).toBe(true);
  });

  it("is refused by Probot when the signature does not match", async () => {
    const app = [...world.emu.apps.values()].find((a) => a.slug === "ferry")!;
    accounts.setWebhook(world.emu, app.id, app.webhookUrl, "wrong-secret");
    const { data: issue } = await world.as("mona").rest.issues.create({ owner, repo, title: "Again" });
    await actAs.comment(world.emu, owner, repo, issue.number, "/bump 1.9.0", { as: "mona" });
    await world.emu.idle();
    const last = world.emu.webhooks.deliveries().at(-1)!;
    expect(last.status).toBeGreaterThanOrEqual(400);
    accounts.setWebhook(world.emu, app.id, app.webhookUrl, "probot-secret");
  });
});
