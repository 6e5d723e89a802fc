/**
 * End to end: the real app (Probot, signed webhooks, `startFerryServer`) against the GitHub
 * emulator and the embedded OCI registry. Nothing is faked at a port here.
 */
import { Octokit } from "@octokit/rest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseBody } from "../../src/core/pr/body.js";
import { commandReply, startWorld, type World } from "../support/app-e2e-world.js";
import { accounts, actAs, inspect, repos } from "../../packages/sandbox/src/github/index.js";

describe("Ferry end to end (Probot + GitHub emulator + embedded registry)", () => {
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

    it("/ferry history staging answers what ran over time and at a moment, with the merged PR, its commit and who merged it", async () => {
      // GitHub's times are whole seconds: a minute on the emulator's clock keeps the repository's
      // creation and the merge apart however fast the machine is.
      world.emu.advanceClock(60_000);
      await world.push("1.8.0");
      const [pull] = await world.pulls();
      expect(pull?.merged_at).not.toBeNull();
      const issue = await world.openIssue();
      const comment = (body: string): Promise<string> => commandReply(world, issue, body);
      const history = await comment("/ferry history staging");
      expect(history).toMatch(/^History of staging, newest first:/);
      expect(history).toMatch(
        new RegExp(
          `shop: \`1\\.7\\.0\` → \`1\\.8\\.0\`, promotion \\[[0-9a-f]{7}\\]\\(${world.emu.webUrl}/acme/config/commit/[0-9a-f]{40}\\) \\[#${pull!.number}\\]\\(${world.emu.webUrl}/acme/config/pull/${pull!.number}\\) by @`,
        ),
      );
      // The moment the config repo was created: staging ran 1.7.0 then.
      const { data: commits } = await world.as.mona.rest.repos.listCommits({
        owner: "acme",
        repo: "config",
        path: "overlays/staging",
      });
      const created = commits.at(-1)!.commit.committer!.date!.replace(/\.\d+Z$/, "Z");
      expect(Date.parse(created)).toBeLessThan(Date.parse(pull!.merged_at!));
      const at = await comment(`/ferry history staging shop --at ${created}`);
      expect(at).toMatch(/^What ran in staging at .*:\n\n- shop: `1\.7\.0` since /);
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

  it("CI gating: a tag pushed without a revision label or git tag is not proposed, and the dashboard and /status say why", async () => {
    world = await startWorld({
      ci: false,
      source: true,
      server: { status: { token: "e2e-status-token" } },
    });
    await world.push("1.9.0");
    await world.server.scanNow();
    await world.settle();
    expect(await world.pulls()).toEqual([]);
    const why = "1.9.0 waits for CI gating: no revision label and no tag 1.9.0 in acme/shop";

    const { data: issues } = await world.as.mona.rest.issues.listForRepo({ owner: "acme", repo: "config" });
    const dashboard = issues.find((issue) => issue.title === "Ferry dashboard");
    expect(dashboard?.body).toContain(why);

    const response = await fetch(`${world.server.url}/status`, {
      headers: { authorization: "Bearer e2e-status-token" },
    });
    const status = (await response.json()) as Record<
      string,
      { notices: { environment: string; message: string }[] }
    >;
    expect(status["acme/config"]?.notices).toContainEqual({
      environment: "staging",
      image: "shop",
      message: why,
    });
  });

  it("a PR adding a plaintext Secret to staging gets a failing ferry/config check on the exact line, naming the alternatives", async () => {
    world = await startWorld({ ci: false });
    const secret =
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: shop-db\nstringData:\n  password: hunter2\n";
    // Also a secretGenerator reading a plaintext file of the repo, beside a SOPS-encrypted one and a
    // SealedSecret, which pass.
    const overlay = (await inspect.readFile(
      world.emu,
      "acme",
      "config",
      "main",
      "overlays/staging/kustomization.yaml",
    ))!;
    const kustomization = `${overlay.replace("  - deployment.yaml\n", "  - deployment.yaml\n  - secret.yaml\n  - sealed.yaml\n")}secretGenerator:\n  - name: api\n    envs:\n      - api.env\n  - name: token\n    envs:\n      - token.enc.env\n`;
    const generatorLine = kustomization.split("\n").indexOf("      - api.env") + 1;
    const head = await actAs.commit(
      world.emu,
      "acme",
      "config",
      "add-db",
      {
        "overlays/staging/secret.yaml": secret,
        "overlays/staging/kustomization.yaml": kustomization,
        "overlays/staging/api.env": "API_KEY=plain\n",
        "overlays/staging/token.enc.env": "TOKEN=ENC[AES256_GCM,data:x]\nsops_mac=ENC[AES256_GCM,data:y]\n",
        "overlays/staging/sealed.yaml":
          "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: s\nspec:\n  encryptedData:\n    password: AgBy3i\n",
      },
      "Add the database password",
      { as: "mona" },
    );
    await actAs.openPullRequest(world.emu, "acme", "config", { head: "add-db", title: "Add db", as: "mona" });
    await world.settle();
    const { data } = await world.as.mona.rest.checks.listForRef({ owner: "acme", repo: "config", ref: head });
    const run = data.check_runs.find((check) => check.name === "ferry/config");
    expect(run?.conclusion).toBe("failure");
    const { data: annotations } = await world.as.mona.rest.checks.listAnnotations({
      owner: "acme",
      repo: "config",
      check_run_id: run!.id,
    });
    expect(annotations).toContainEqual(
      expect.objectContaining({
        path: "overlays/staging/secret.yaml",
        start_line: 5,
        annotation_level: "failure",
        message: expect.stringContaining("plaintext Secret shop-db (stringData) in Git"),
      }),
    );
    expect(annotations[0]!.message).toMatch(/SealedSecret.*SOPS.*ExternalSecret/);
    expect(annotations).toContainEqual(
      expect.objectContaining({
        path: "overlays/staging/kustomization.yaml",
        start_line: generatorLine,
        message: expect.stringContaining(
          "secretGenerator api makes a plaintext Secret from overlays/staging/api.env",
        ),
      }),
    );
    // The SOPS-encrypted generator source and the SealedSecret pass: two annotations, no more.
    expect(annotations).toHaveLength(2);
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
