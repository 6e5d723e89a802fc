/**
 * End to end, the worked example of docs/with-flux.md: Ferry promotes, Flux applies, and prod
 * soaks on what Flux notification-controller's `github` provider reports for the staging
 * Kustomization. The engine is simulated by a test actor with its own identity (the bot account
 * `flux-bot` whose token the Provider's secret holds) writing commit statuses in the shape the
 * provider sends them (docs/with-flux.md "What Flux writes"): on the source revision the event names,
 * context `kustomization/<name>/<first segment of the Provider's uid>`, state `success` for an
 * info event and `failure` for an error event, the event's reason split and lowercased as the
 * description.
 */
import { Octokit } from "@octokit/rest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { accounts, repos } from "../../packages/sandbox/src/github/index.js";
import { parseBody } from "../../src/core/pr/body.js";
import { commandReply, startWorld, type World } from "../support/app-e2e-world.js";
import { configHead, soakOnStagingHealth } from "../support/soak-config.js";

/** `generateDefaultCommitStatus`: kind/name/<uid's first segment>, lowercased. */
const CONTEXT = "kustomization/shop-staging/7c2b5a04";

describe("Ferry with Flux (end to end)", () => {
  let world: World;
  let offsetMs = 0;
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

  const fluxConfig = () =>
    soakOnStagingHealth(
      world,
      "    health: { source: flux, kustomization: shop-staging, reporters: [flux-bot] }\n",
      "staging is applied by Flux; prod soaks on it",
    );

  /** notification-controller's github provider, with the token of the bot account flux-bot. */
  function fluxBot(): Octokit {
    const bot = accounts.createUser(world.emu, "flux-bot", { type: "Bot" });
    repos.setCollaborator(world.emu, "acme", "config", "flux-bot", "write");
    return new Octokit({ baseUrl: world.emu.apiUrl, auth: bot.token, request: { retries: 0 } });
  }

  /** What `(*GitHub).Post` sends for a Kustomization event (ProgressingReason events are not sent). */
  async function fluxEvent(
    as: Octokit,
    revision: string,
    severity: "info" | "error",
    reason: "ReconciliationSucceeded" | "HealthCheckFailed",
  ): Promise<void> {
    await as.rest.repos.createCommitStatus({
      owner: "acme",
      repo: "config",
      sha: revision,
      state: severity === "info" ? "success" : "failure",
      context: CONTEXT,
      description: reason === "ReconciliationSucceeded" ? "reconciliation succeeded" : "health check failed",
    });
  }

  it("a promotion waits for Flux's health of the staging digest, ignores any other writer, then proceeds", async () => {
    const flux = fluxBot();
    await fluxConfig();
    const digest = await world.push("1.8.0");
    const staged = await configHead(world);
    const issue = await world.openIssue();
    expect(await commandReply(world, issue, "/promote prod")).toMatch(
      /no health reported for staging by flux kustomization\/shop-staging \(as flux-bot\)/,
    );

    // Flux applied the 1.8.0 commit and its health check failed.
    await fluxEvent(flux, staged, "error", "HealthCheckFailed");
    later(60_000);
    // A writer of the repository posts a success in Flux's context: it is not Flux.
    await fluxEvent(world.as.hubot, staged, "info", "ReconciliationSucceeded");
    later(3_600_000);
    expect(await commandReply(world, issue, "/promote prod")).toMatch(/staging is not healthy \(failure\)/);

    // Flux reconciles again and the workload is healthy: the soak counts from there.
    await fluxEvent(flux, staged, "info", "ReconciliationSucceeded");
    later(20 * 60_000);
    expect(await commandReply(world, issue, "/promote prod")).toMatch(
      /staging has been healthy for 20m\w*, less than its soak of 30m/,
    );
    expect((await world.pulls()).filter((pull) => pull.head.ref === "ferry/prod")).toEqual([]);

    later(15 * 60_000);
    await commandReply(world, issue, "/promote prod");
    const prod = (await world.pulls("open")).filter((pull) => pull.head.ref === "ferry/prod");
    expect(prod).toHaveLength(1);
    expect(parseBody(prod[0]!.body)?.changes[0]?.to).toEqual({ tag: "1.8.0", digest });
  });
});
