/**
 * End to end, the worked example of docs/with-argocd.md: Ferry promotes, Argo CD applies, and prod
 * soaks on what Argo CD Notifications' `github` service reports for the staging Application. The
 * engine is simulated by a test actor with its own identity (a GitHub App, `argocd-notifier[bot]`)
 * writing the commit status of the documented `app-deployed` template, in the shape the service
 * sends it (docs/with-argocd.md "What Argo CD writes"): on the synced revision, context
 * `continuous-delivery/<app>`, the message truncated to 140 characters as the description.
 */
import { Octokit } from "@octokit/rest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { accounts } from "../../packages/sandbox/src/github/index.js";
import { parseBody } from "../../src/core/pr/body.js";
import { commandReply, startWorld, type World } from "../support/app-e2e-world.js";
import { configHead, soakOnStagingHealth } from "../support/soak-config.js";

const STAGING_HEALTH = `    health: { source: argocd, application: shop-staging, reporters: ["argocd-notifier[bot]"] }\n`;

describe("Ferry with Argo CD (end to end)", () => {
  let world: World;
  let offsetMs = 0;
  /** Ferry's clock runs with the emulator's, so half an hour can pass without waiting for it. */
  const later = (ms: number) => {
    world.emu.advanceClock(ms);
    offsetMs += ms;
  };
  beforeEach(async () => {
    offsetMs = 0;
    world = await startWorld({ ci: true, server: { ferry: { now: () => new Date(Date.now() + offsetMs) } } });
  });
  afterEach(async () => {
    await world.close();
  });

  const argoConfig = () =>
    soakOnStagingHealth(world, STAGING_HEALTH, "staging is applied by Argo CD; prod soaks on it");

  /** Argo CD Notifications, installed as its own GitHub App (statuses and deployments: write). */
  function argoCdNotifier(): Octokit {
    const app = accounts.createApp(world.emu, {
      slug: "argocd-notifier",
      permissions: { statuses: "write", deployments: "write", contents: "read" },
    });
    const installation = accounts.installApp(world.emu, app.id, "acme");
    const token = accounts.issueInstallationToken(world.emu, world.emu.installations.get(installation.id)!);
    return new Octokit({ baseUrl: world.emu.apiUrl, auth: token.token, request: { retries: 0 } });
  }

  /**
   * What notifications-engine's github service sends for the `app-deployed` template
   * (`CreateStatus(owner, repo, revision, {State, Description, Context, TargetURL})`).
   */
  async function appDeployed(as: Octokit, revision: string): Promise<void> {
    await as.rest.repos.createCommitStatus({
      owner: "acme",
      repo: "config",
      sha: revision,
      state: "success",
      context: "continuous-delivery/shop-staging",
      description: "Application shop-staging is now running new version of deployments manifests.\n".slice(
        0,
        140,
      ),
      target_url: "http://127.0.0.1:8080/applications/shop-staging?operation=true",
    });
  }

  it("a promotion waits for Argo CD's health of the staging digest, ignores any other writer, then proceeds", async () => {
    const argocd = argoCdNotifier();
    await argoConfig();
    const before = await configHead(world);
    // Argo CD reports the sync of the commit before 1.8.0: staging was healthy, with 1.7.0.
    await appDeployed(argocd, before);
    const digest = await world.push("1.8.0");
    const staged = await configHead(world);
    expect(staged).not.toBe(before);
    const issue = await world.openIssue();

    // Healthy with other versions does not count: the soak is tied to what is promoted.
    expect(await commandReply(world, issue, "/promote prod")).toMatch(
      /no health reported for staging with the versions being promoted by argocd app shop-staging \(as argocd-notifier\[bot\]\)/,
    );

    // A writer of the repository posts the very same status on the new commit: it is not Argo CD.
    await appDeployed(world.as.hubot, staged);
    later(3_600_000);
    expect(await commandReply(world, issue, "/promote prod")).toMatch(
      /no health reported for staging with the versions being promoted by argocd app shop-staging/,
    );

    // Argo CD syncs the 1.8.0 commit and reports it healthy: the soak starts from there.
    await appDeployed(argocd, staged);
    later(10 * 60_000);
    expect(await commandReply(world, issue, "/promote prod")).toMatch(
      /staging has been healthy for 10m\w*, less than its soak of 30m/,
    );
    expect((await world.pulls()).filter((pull) => pull.head.ref === "ferry/prod")).toEqual([]);

    later(25 * 60_000);
    await commandReply(world, issue, "/promote prod");
    const prod = (await world.pulls("open")).filter((pull) => pull.head.ref === "ferry/prod");
    expect(prod).toHaveLength(1);
    expect(parseBody(prod[0]!.body)?.changes[0]?.to).toEqual({ tag: "1.8.0", digest });
  });

  it("with no Argo CD report at all, the promotion waits and says why, and the ferry/config check warns", async () => {
    await argoConfig();
    await world.push("1.8.0");
    later(2 * 3_600_000);
    const issue = await world.openIssue();
    expect(await commandReply(world, issue, "/promote prod")).toMatch(
      /no health reported for staging by argocd app shop-staging \(as argocd-notifier\[bot\]\) in 2h/,
    );
    const { data } = await world.as.mona.rest.checks.listForRef({
      owner: "acme",
      repo: "config",
      ref: (
        await world.as.mona.rest.repos.listCommits({
          owner: "acme",
          repo: "config",
          path: ".github/ferry.yml",
        })
      ).data[0]!.sha,
      check_name: "ferry/config",
    });
    const summary = `${data.check_runs[0]?.output.summary ?? ""}\n${data.check_runs[0]?.output.text ?? ""}`;
    expect(summary).toMatch(/no health was ever reported for staging by argocd app shop-staging/);
  });
});
