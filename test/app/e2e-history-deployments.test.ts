import { accounts, repos } from "../../packages/sandbox/src/github/index.js";
/**
 * End to end: `/ferry history` sets the config repo's history beside what the environment's
 * reconciler reported through GitHub Deployment statuses (the real reporter, the real comment
 * route, the GitHub emulator). A merge whose rollout is reported an hour later did not run in
 * between, and the answer says so.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GitHubDeploymentReporter } from "../../src/adapters/github/deployment-reporter.js";
import { commandReply, startWorld, type World } from "../support/app-e2e-world.js";

const HOUR_MS = 3600_000;

describe("/ferry history with the reconciler's Deployment statuses (end to end)", () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld({ ci: true, reporters: ["staging-reconciler"] });
  });
  afterEach(async () => {
    await world.close();
  });

  const mainHead = async (): Promise<string> =>
    (await world.as.mona.rest.repos.getBranch({ owner: "acme", repo: "config", branch: "main" })).data.commit
      .sha;

  const comment = (issue: number, body: string): Promise<string> => commandReply(world, issue, body);

  it("--at between a merge and the reconciler's report of it names the version still running, from the Deployment statuses, and says why", async () => {
    const bot = accounts.createUser(world.emu, "staging-reconciler", { type: "Bot" });
    repos.setCollaborator(world.emu, "acme", "config", "staging-reconciler", "write");
    const reporter = new GitHubDeploymentReporter({
      repository: "acme/config",
      environment: "staging",
      token: bot.token,
      baseUrl: world.emu.apiUrl,
      instance: "staging",
    });
    // The reconciler applied the repository's first commit (shop 1.7.0).
    const first = await mainHead();
    await reporter.report({ revision: first, state: "success", description: "Synced and Healthy" });

    world.emu.advanceClock(60_000);
    await world.push("1.8.0");
    const [pull] = await world.pulls();
    expect(pull?.merged_at).not.toBeNull();
    const merged = await mainHead();
    expect(merged).not.toBe(first);
    const mergedAt = Date.parse(pull!.merged_at!);

    // The rollout of the merge is reported an hour later.
    world.emu.advanceClock(HOUR_MS);
    await reporter.report({ revision: merged, state: "success", description: "Synced and Healthy" });
    const { data: deployments } = await world.as.mona.rest.repos.listDeployments({
      owner: "acme",
      repo: "config",
      environment: "staging",
      sha: merged,
    });
    const { data: statuses } = await world.as.mona.rest.repos.listDeploymentStatuses({
      owner: "acme",
      repo: "config",
      deployment_id: deployments[0]!.id,
    });
    const reportedAt = statuses.at(-1)!.created_at;
    expect(Date.parse(reportedAt) - mergedAt).toBeGreaterThanOrEqual(HOUR_MS);

    const issue = await world.openIssue();
    const between = new Date(mergedAt + HOUR_MS / 2).toISOString().replace(/\.\d{3}Z$/, "Z");
    const atBetween = await comment(issue, `/ferry history staging shop --at ${between}`);
    expect(atBetween).toContain(`- shop: \`1.7.0\`, reported applied by the reconciler at `);
    expect(atBetween).toContain(
      `(commit [${first.slice(0, 7)}](${world.emu.webUrl}/acme/config/commit/${first}), Healthy); source: Deployment statuses`,
    );
    expect(atBetween).toMatch(
      /The config repo already said `1\.8\.0` since \S+, promotion .* but the reconciler had not reported it applied by then\./,
    );

    const after = new Date(Date.parse(reportedAt) + 1000).toISOString();
    const atAfter = await comment(issue, `/ferry history staging shop --at ${after}`);
    expect(atAfter).toContain(
      `[#${pull!.number}](${world.emu.webUrl}/acme/config/pull/${pull!.number}) by @`,
    );
    expect(atAfter).toContain(
      `; reported applied by the reconciler at ${new Date(reportedAt).toISOString()} (commit [${merged.slice(0, 7)}](${world.emu.webUrl}/acme/config/commit/${merged}), Healthy); source: Deployment statuses`,
    );
    expect(atAfter).toMatch(/^- shop: `1\.8\.0` since /m);
    expect(atAfter).not.toContain("already said");

    const list = await comment(issue, "/ferry history staging");
    expect(list).toMatch(
      new RegExp(
        `shop: \`1\\.7\\.0\` → \`1\\.8\\.0\`, promotion .*; applied ${new Date(reportedAt).toISOString().replace(/\./g, "\\.")} \\(Healthy\\)`,
      ),
    );
    expect(list).toMatch(
      /Applied times and health: the staging reconciler's Deployment statuses \(\d+ read\)\.$/,
    );
  });
});
