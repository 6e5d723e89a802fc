import { Probot, ProbotOctokit } from "probot";
import { afterEach, describe, expect, it } from "vitest";
import { createWriteBudget, type WriteBudgetOptions } from "../../../src/adapters/github/write-budget.js";
import { UnthrottledOctokit } from "../../../packages/sandbox/src/ferry-app.js";
import {
  startGitHubEmulator,
  type GitHubEmulator,
  accounts,
  repos,
} from "../../../packages/sandbox/src/github/index.js";

let emu: GitHubEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

/**
 * acme/config with an app installed, and a Probot installation client whose writes go through a
 * write budget with these limits. Its clock moves only when a write waits (each wait is kept in
 * `waits`): no real time passes.
 */
async function budgetedClient(limits: Omit<WriteBudgetOptions, "now" | "sleep">) {
  emu = await startGitHubEmulator();
  accounts.createUser(emu, "mona");
  accounts.createOrg(emu, "acme");
  await repos.createRepo(emu, "acme", "config", {
    files: { "README.md": "x\n" },
    collaborators: { mona: "admin" },
  });
  const app = accounts.createApp(emu, {
    slug: "ferry",
    permissions: { issues: "write", metadata: "read" },
  });
  const installation = accounts.installApp(emu, app.id, "acme");
  let now = 1_000_000;
  const waits: number[] = [];
  const budget = createWriteBudget({
    ...limits,
    now: () => now,
    sleep: async (ms) => {
      waits.push(ms);
      now += ms;
    },
  });
  const probot = new Probot({
    appId: app.id,
    privateKey: app.privateKey,
    baseUrl: emu.apiUrl,
    // Throttling off as the function form does it: Probot passes its own `throttle` options, which
    // override an object given to `defaults`, and its throttling spaces notification-triggering
    // writes (issues, comments) 3 s apart in real time.
    Octokit: UnthrottledOctokit.plugin(budget.plugin as never) as typeof ProbotOctokit,
    logLevel: "fatal",
  });
  return { emu, installation, budget, waits, octokit: await probot.auth(installation.id) };
}

describe("GitHub's write budget per installation, shared by the live replicas", () => {
  it("holds an installation's writes to its part of 80 a minute (here 4 among 2 replicas: 2), waiting instead of failing; reads are free", async () => {
    const { emu, installation, budget, waits, octokit } = await budgetedClient({
      share: () => 2,
      perMinute: 4,
    });
    const { data: issue } = await octokit.rest.issues.create({ owner: "acme", repo: "config", title: "t" });
    for (let i = 0; i < 4; i++) {
      await octokit.rest.issues.createComment({
        owner: "acme",
        repo: "config",
        issue_number: issue.number,
        body: `${i}`,
      });
      await octokit.rest.issues.get({ owner: "acme", repo: "config", issue_number: issue.number });
    }
    // 5 writes at 2 a minute: the 3rd and the 5th waited for the window to slide (a minute each).
    expect(waits).toEqual([60_000, 60_000]);
    expect(budget.use()).toEqual({ [String(installation.id)]: { used: 1, limit: 2 } });
    const posted = emu.requests().filter((r) => r.method === "POST" && /\/comments$/.test(r.path));
    expect(posted).toHaveLength(4);
  });

  it("also holds them to their part of 500 an hour (here 3 for one replica): the 4th write waits for the hour's window, then goes", async () => {
    const { emu, budget, waits, octokit } = await budgetedClient({
      share: () => 1,
      perMinute: 80,
      perHour: 3,
    });
    for (let i = 0; i < 4; i++)
      await octokit.rest.issues.create({ owner: "acme", repo: "config", title: `${i}` });
    expect(waits).toEqual([3_600_000]);
    expect(budget.delayed).toBe(1);
    expect(emu.requests().filter((r) => r.method === "POST" && /\/issues$/.test(r.path))).toHaveLength(4);
  });
});
