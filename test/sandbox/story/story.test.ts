/**
 * The whole sandbox story, once (it is the most expensive test in the suite): through the CLI's
 * `main(["sandbox", "--json"])`, so one run checks the steps, the final state and the JSON shape.
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import type { SandboxJson } from "../../../packages/sandbox/src/story/index.js";
import { runFerry } from "../../support/cli-io.js";

const STEPS = [
  "setup",
  "push",
  "staging-pr",
  "staging-rollout",
  "promote-command",
  "prod-diff",
  "prod-pr",
  "self-heal",
  "rollback",
  "history",
];

// The story runs whole in one hook: 44 s quiet, about 130 s up to its 9th step under a load of 15-19
// (docs/testing.md "Runs under load since"); the backstop is for a machine ten times slower.
vi.setConfig({ hookTimeout: 900_000 });

let exitCode: number;
let stdout = "";
let stderr = "";
let listeningBefore = 0;

function listeningServers(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === "TCPServerWrap").length;
}

beforeAll(async () => {
  listeningBefore = listeningServers();
  ({ code: exitCode, stdout, stderr } = await runFerry(["sandbox", "--json"], process.cwd()));
});

describe("ferry sandbox --json (the release of shop 1.8.0, end to end)", () => {
  it("exits 0 and prints nothing but one JSON document on stdout", () => {
    // On failure, stderr names the failed step: show it.
    expect({ exitCode, stderr: exitCode === 0 ? "" : stderr }).toEqual({ exitCode: 0, stderr: "" });
    expect(() => JSON.parse(stdout)).not.toThrow();
  });

  it("reports every step of the story, in order, each ok with its latency and what it saw", () => {
    const { steps } = JSON.parse(stdout) as SandboxJson;
    expect(steps.map((step) => step.name)).toEqual(STEPS);
    for (const step of steps) {
      expect(step).toEqual({ name: step.name, ok: true, ms: expect.any(Number), detail: expect.any(String) });
      expect(step.ms).toBeGreaterThanOrEqual(0);
      expect(step.detail.length).toBeGreaterThan(0);
    }
  });

  it("says what each step observed: the digest pushed is the one staging got and prod was offered", () => {
    const { steps } = JSON.parse(stdout) as SandboxJson;
    const detail = Object.fromEntries(steps.map((step) => [step.name, step.detail]));
    const pushed = /pushed shop:1\.8\.0 \((sha256:[0-9a-f]{12})\)/.exec(detail.push!)?.[1];
    expect(pushed).toBeDefined();
    expect(detail["staging-pr"]).toContain(pushed);
    expect(detail["staging-pr"]).toMatch(/check passed, (auto-merge by )?ferry\[bot\] merged [0-9a-f]{7}/);
    expect(detail["prod-pr"]).toContain(`staging's ${pushed}`);
    // The prod PR's ferry/diff shows the rendered image change, at staging's digest, and nothing else.
    expect(detail["prod-diff"]).toMatch(
      /^ferry\/diff on #\d+: success; prod: 0 added, 1 changed, 0 removed, \d+ unchanged; \S+\/acme\/shop 1\.7\.3 → 1\.8\.0 /,
    );
    expect(detail["prod-diff"]).toContain(pushed!.slice("sha256:".length));
    expect(detail["promote-command"]).toMatch(/eve refused 👎 .*mona accepted 🚀/);
    expect(detail["self-heal"]).toMatch(/restored 3\/3 available/);
    expect(detail.rollback).toMatch(/prod\/shop runs 1\.7\.3, 3\/3 available; held by mona \(rollback\)/);
    expect(detail["self-heal"]).toMatch(
      /recorded spec\.replicas 1 → 3 by kubectl-scale; the Deployment status says "1 manual change undone in the last 24 h"$/,
    );
    expect(detail.rollback).toMatch(/the dashboard shows prod's drift$/);
    expect(detail.history).toMatch(
      /^\/ferry history prod --at \S+: prod ran shop 1\.8\.0 then \(promotion #\d+ merged by mona\), read from the config repo's history and prod's Deployment statuses$/,
    );
  });

  it("ends with staging on 1.8.0 and prod back on 1.7.3 and held, both Synced and Healthy", () => {
    const { environments, steps } = JSON.parse(stdout) as SandboxJson;
    const pushed = /(sha256:[0-9a-f]{12})/.exec(steps.find((step) => step.name === "push")!.detail)![1]!;
    expect(environments).toEqual([
      {
        environment: "staging",
        version: "1.8.0",
        digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        sync: "Synced",
        health: "Healthy",
        held: false,
      },
      {
        environment: "prod",
        version: "1.7.3",
        digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        sync: "Synced",
        health: "Healthy",
        held: true,
      },
    ]);
    expect(environments[0]!.digest.startsWith(pushed)).toBe(true);
    expect(environments[1]!.digest).not.toBe(environments[0]!.digest);
  });

  it("prints no endpoints without --keep and leaves no server listening", () => {
    expect((JSON.parse(stdout) as SandboxJson).endpoints).toBeUndefined();
    expect(listeningServers()).toBe(listeningBefore);
  });
});
