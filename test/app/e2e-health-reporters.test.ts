/**
 * End to end: an environment's health counts only from the logins that report it (`health.reporters`,
 * docs/security.md "Health"). Anyone who can write to the config repo can post a Deployment status; a
 * writer's "success", newer than what staging's reconciler reported, must not walk a release into prod
 * past `soak` (the attacker's route: the real comment route, the GitHub emulator, the real reporter).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { accounts, repos } from "../../packages/sandbox/src/github/index.js";
import { GitHubDeploymentReporter } from "../../src/adapters/github/deployment-reporter.js";
import { commandReply, startWorld, type World } from "../support/app-e2e-world.js";

describe("health only from its reporters (end to end)", () => {
  let world: World;
  /** Ferry's clock runs with the emulator's, so an hour can pass without waiting for it. */
  let offsetMs = 0;
  const later = (ms: number) => {
    world.emu.advanceClock(ms);
    offsetMs += ms;
  };
  beforeEach(async () => {
    offsetMs = 0;
    world = await startWorld({
      ci: true,
      reporters: ["staging-reconciler"],
      server: { ferry: { now: () => new Date(Date.now() + offsetMs) } },
    });
  });
  afterEach(async () => {
    await world.close();
  });

  const mainHead = async (): Promise<string> =>
    (await world.as.mona.rest.repos.getBranch({ owner: "acme", repo: "config", branch: "main" })).data.commit
      .sha;

  /** prod soaks staging for 30 minutes (staging's health comes from its reconciler's login). */
  async function soakingConfig(): Promise<void> {
    const { data } = await world.as.mona.rest.repos.getContent({
      owner: "acme",
      repo: "config",
      path: ".github/ferry.yml",
    });
    const file = data as { sha: string; content: string };
    const text = Buffer.from(file.content, "base64")
      .toString("utf8")
      .replace("    from: staging\n", "    from: staging\n    soak: 30m\n");
    await world.as.mona.rest.repos.createOrUpdateFileContents({
      owner: "acme",
      repo: "config",
      path: ".github/ferry.yml",
      message: "prod soaks staging",
      content: Buffer.from(text).toString("base64"),
      sha: file.sha,
    });
    await world.settle();
  }

  async function forgedSuccess(sha: string): Promise<void> {
    const { data } = await world.as.hubot.rest.repos.createDeployment({
      owner: "acme",
      repo: "config",
      ref: sha,
      environment: "staging",
      required_contexts: [],
      auto_merge: false,
    });
    await world.as.hubot.rest.repos.createDeploymentStatus({
      owner: "acme",
      repo: "config",
      deployment_id: (data as { id: number }).id,
      state: "success",
      description: "Synced and Healthy",
    });
  }

  /** staging's reconciler (a bot with write access, the named reporter), and prod soaking staging. */
  async function stagingReconciler(): Promise<GitHubDeploymentReporter> {
    const bot = accounts.createUser(world.emu, "staging-reconciler", { type: "Bot" });
    repos.setCollaborator(world.emu, "acme", "config", "staging-reconciler", "write");
    await soakingConfig();
    return new GitHubDeploymentReporter({
      repository: "acme/config",
      environment: "staging",
      token: bot.token,
      baseUrl: world.emu.apiUrl,
      instance: "staging",
    });
  }

  it("a writer's newer success does not stand in for the reconciler's failure: /promote prod waits for staging", async () => {
    const reporter = await stagingReconciler();
    const head = await mainHead();
    await reporter.report({ revision: head, state: "failure", description: "Degraded: shop 0/2 available" });
    later(60_000);
    await forgedSuccess(head);
    later(3_600_000);

    const issue = await world.openIssue();
    const reply = await commandReply(world, issue, "/promote prod");
    expect(reply).toMatch(/staging is not healthy \(failure\)/);
    expect((await world.pulls()).filter((pull) => pull.head.ref === "ferry/prod")).toEqual([]);
  });

  it("the reporter's own success counts once it has soaked", async () => {
    const reporter = await stagingReconciler();
    await reporter.report({
      revision: await mainHead(),
      state: "success",
      description: "Synced and Healthy",
    });
    later(3_600_000);
    const issue = await world.openIssue();
    const reply = await commandReply(world, issue, "/promote prod");
    await world.settle();
    expect(reply).not.toMatch(/not healthy|soak/);
    expect((await world.pulls()).filter((pull) => pull.head.ref === "ferry/prod")).toHaveLength(1);
  });
});
