/**
 * End to end: the real app (Probot, signed webhooks, `startFerryServer`) against the GitHub
 * emulator and the embedded OCI registry. Nothing is faked at a port here.
 */
import { Octokit } from "@octokit/rest";
import { ProbotOctokit } from "probot";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFerryServer, type FerryServer } from "../../src/main.js";
import { parseBody } from "../../src/core/pr/body.js";
import { startGitHubEmulator, type GitHubEmulator } from "../../src/sandbox/github/index.js";
import { startEmbeddedRegistry, type EmbeddedRegistry } from "../../src/sandbox/registry/embedded-registry.js";
import { pushImage } from "../../src/sandbox/registry/push-image.js";

const SECRET = "e2e-webhook-secret";
const REGISTRY_SECRET = "e2e-registry-secret";
const TestOctokit = ProbotOctokit.defaults((options: Record<string, unknown>) => ({ ...options, throttle: { enabled: false }, retry: { enabled: false } }));

interface World {
  emu: GitHubEmulator;
  registry: EmbeddedRegistry;
  server: FerryServer;
  as: Record<"mona" | "hubot" | "eve", Octokit>;
  settle(): Promise<void>;
  push(tag: string): Promise<string>;
  /** An open issue to comment on (commands on the merged staging PR are refused, RELIABILITY.md row 12). */
  openIssue(): Promise<number>;
  pulls(state?: "open" | "closed" | "all"): Promise<{ number: number; title: string; head: { ref: string; sha: string }; body: string | null; merged_at: string | null; state: string }[]>;
}

function config(registryHost: string): string {
  return `images:
  shop:
    repository: ${registryHost}/acme/shop
    policy: { range: "^1.0.0" }
environments:
  staging:
    paths: [overlays/staging]
    update: auto
    merge: auto
  prod:
    paths: [overlays/prod]
    from: staging
    update: manual
    merge: review
    promoters: { permission: maintain }
`;
}

function overlay(registryHost: string, tag: string): string {
  return `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - deployment.yaml
images:
  - name: ${registryHost}/acme/shop
    newTag: "${tag}"
`;
}

async function startWorld(options: { ci: boolean }): Promise<World> {
  const emu = await startGitHubEmulator();
  const registry = await startEmbeddedRegistry();
  const users = { mona: emu.createUser("mona"), hubot: emu.createUser("hubot"), eve: emu.createUser("eve") };
  emu.createOrg("acme");
  await pushImage(registry.url, "acme/shop", "1.7.0", { content: "1.7.0" });
  await emu.createRepo("acme", "config", {
    files: {
      ".github/ferry.yml": config(registry.host),
      "overlays/staging/kustomization.yaml": overlay(registry.host, "1.7.0"),
      "overlays/staging/deployment.yaml": "kind: Deployment\n",
      "overlays/prod/kustomization.yaml": overlay(registry.host, "1.7.0"),
      "overlays/prod/deployment.yaml": "kind: Deployment\n",
    },
    collaborators: { mona: "maintain", hubot: "write" },
    allowAutoMerge: true,
  });
  emu.protectBranch("acme", "config", "main", { requiredChecks: ["ci"] });
  if (options.ci) emu.setCi("acme", "config", { context: "ci", conclusion: "success" });
  const app = emu.createApp({
    slug: "ferry",
    permissions: { contents: "write", pull_requests: "write", issues: "write", checks: "write", statuses: "read", deployments: "read", members: "read", metadata: "read" },
    webhookSecret: SECRET,
  });
  emu.installApp(app.id, "acme");
  const server = await startFerryServer({
    appId: app.id,
    privateKey: app.privateKey,
    webhookSecret: SECRET,
    baseUrl: emu.apiUrl,
    webUrl: emu.webUrl,
    Octokit: TestOctokit as unknown as typeof ProbotOctokit,
    scanIntervalMs: false,
    registrySecrets: { distribution: REGISTRY_SECRET },
    registryCoalesceMs: 20,
    logLevel: "fatal",
  });
  emu.setWebhook(app.id, `${server.url}/api/github/webhooks`, SECRET);
  registry.addNotificationEndpoint({ url: `${server.url}/registry/distribution`, headers: { Authorization: REGISTRY_SECRET } });
  const octokit = (token: string) => new Octokit({ baseUrl: emu.apiUrl, auth: token, request: { retries: 0 } });
  const as = { mona: octokit(users.mona.token), hubot: octokit(users.hubot.token), eve: octokit(users.eve.token) };

  /** Until the emulator, the registry notifications and Ferry's queue are all quiet. */
  const settle = async (): Promise<void> => {
    for (let round = 0; round < 6; round++) {
      await new Promise((resolve) => setTimeout(resolve, 60));
      await emu.idle();
      await server.idle();
    }
  };
  return {
    emu,
    registry,
    server,
    as,
    settle,
    async push(tag) {
      const { digest } = await pushImage(registry.url, "acme/shop", tag, { content: tag });
      await settle();
      return digest;
    },
    async openIssue() {
      const { data } = await as.mona.rest.issues.create({ owner: "acme", repo: "config", title: "Release shop" });
      return data.number;
    },
    async pulls(state = "all") {
      const { data } = await as.mona.rest.pulls.list({ owner: "acme", repo: "config", state, per_page: 100 });
      return data;
    },
  };
}

describe("Ferry end to end (Probot + GitHub emulator + embedded registry)", () => {
  let world: World;
  afterEach(async () => {
    await world.server.close();
    await world.registry.close();
    await world.emu.close();
  });

  describe("with CI that passes", () => {
    beforeEach(async () => {
      world = await startWorld({ ci: true });
    });

    it("turns a push of shop:1.8.0 into exactly one staging PR that auto-merges once its check passes", async () => {
      await world.push("1.8.0");
      const pulls = await world.pulls();
      expect(pulls.map((pull) => pull.title)).toEqual(["Promote shop 1.8.0 to staging"]);
      const { data: files } = await world.as.mona.rest.pulls.listFiles({ owner: "acme", repo: "config", pull_number: pulls[0]!.number });
      expect(files.map((file) => [file.filename, file.additions, file.deletions])).toEqual([["overlays/staging/kustomization.yaml", 1, 1]]);
      expect(pulls[0]!.merged_at).not.toBeNull();
      expect(await world.emu.readFile("acme", "config", "main", "overlays/staging/kustomization.yaml")).toContain('newTag: "1.8.0"');
    });

    it("/promote prod by a maintainer opens the prod PR with the digest staging runs", async () => {
      const digest = await world.push("1.8.0");
      const issue = await world.openIssue();
      const { data: comment } = await world.as.mona.rest.issues.createComment({ owner: "acme", repo: "config", issue_number: issue, body: "/promote prod" });
      await world.settle();
      const prod = (await world.pulls("open")).filter((pull) => pull.head.ref === "ferry/prod");
      expect(prod).toHaveLength(1);
      expect(parseBody(prod[0]!.body)?.changes[0]?.to).toEqual({ tag: "1.8.0", digest });
      const { data: reactions } = await world.as.mona.rest.reactions.listForIssueComment({ owner: "acme", repo: "config", comment_id: comment.id });
      expect(reactions.map((reaction) => reaction.content).sort()).toEqual(["eyes", "rocket"]);
    });

    it("/promote prod by an outsider, a bot or in an edited comment changes nothing and says why", async () => {
      await world.push("1.8.0");
      const issue = await world.openIssue();
      const before = world.emu.requests().length;
      await world.as.eve.rest.issues.createComment({ owner: "acme", repo: "config", issue_number: issue, body: "/promote prod" });
      const { data: harmless } = await world.as.hubot.rest.issues.createComment({ owner: "acme", repo: "config", issue_number: issue, body: "looks good" });
      await world.as.hubot.rest.issues.updateComment({ owner: "acme", repo: "config", comment_id: harmless.id, body: "/promote prod" });
      await world.settle();
      expect((await world.pulls()).filter((pull) => pull.head.ref === "ferry/prod")).toHaveLength(0);
      const { data: comments } = await world.as.mona.rest.issues.listComments({ owner: "acme", repo: "config", issue_number: issue });
      expect(comments.map((comment) => comment.body).filter((body) => body?.startsWith("@"))).toEqual([expect.stringMatching(/^@eve you need maintain permission to change prod/)]);
      expect(world.emu.requests().length).toBeGreaterThan(before);
    });

    it("a redelivered comment webhook changes nothing", async () => {
      await world.push("1.8.0");
      const issue = await world.openIssue();
      await world.as.mona.rest.issues.createComment({ owner: "acme", repo: "config", issue_number: issue, body: "/promote prod" });
      await world.settle();
      const pullsBefore = await world.pulls();
      const { data: commentsBefore } = await world.as.mona.rest.issues.listComments({ owner: "acme", repo: "config", issue_number: issue });
      const delivery = world.emu.deliveries().find((d) => d.event === "issue_comment" && d.action === "created")!;
      world.emu.redeliver(delivery.id);
      await world.settle();
      expect(await world.pulls()).toEqual(pullsBefore);
      const { data: commentsAfter } = await world.as.mona.rest.issues.listComments({ owner: "acme", repo: "config", issue_number: issue });
      expect(commentsAfter.length).toBe(commentsBefore.length);
    });

    it("/rollback staging restores the previous version and holds staging until /unhold", async () => {
      await world.push("1.8.0");
      const issue = await world.openIssue();
      await world.as.mona.rest.issues.createComment({ owner: "acme", repo: "config", issue_number: issue, body: "/rollback staging" });
      await world.settle();
      expect(await world.emu.readFile("acme", "config", "main", "overlays/staging/kustomization.yaml")).toContain('newTag: "1.7.0"');
      await world.push("1.8.1");
      expect((await world.pulls()).filter((pull) => pull.title.includes("1.8.1"))).toHaveLength(0);
      await world.as.mona.rest.issues.createComment({ owner: "acme", repo: "config", issue_number: issue, body: "/unhold staging" });
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
    await world.as.mona.rest.issues.createComment({ owner: "acme", repo: "config", issue_number: merged, body: "/promote prod" });
    await world.settle();
    expect((await world.pulls()).filter((pull) => pull.head.ref === "ferry/prod")).toHaveLength(0);
  });

  describe("with CI that never reports", () => {
    beforeEach(async () => {
      world = await startWorld({ ci: false });
    });

    it("updates the same PR when 1.8.1 arrives before 1.8.0 merged", async () => {
      await world.push("1.8.0");
      await world.push("1.8.1");
      const pulls = await world.pulls();
      expect(pulls.map((pull) => [pull.title, pull.state])).toEqual([["Promote shop 1.8.1 to staging", "open"]]);
      const { data: files } = await world.as.mona.rest.pulls.listFiles({ owner: "acme", repo: "config", pull_number: pulls[0]!.number });
      expect(files.map((file) => [file.filename, file.additions, file.deletions])).toEqual([["overlays/staging/kustomization.yaml", 1, 1]]);
    });
  });
});
