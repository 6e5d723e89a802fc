/**
 * The production Octokit (docs/reliability.md row 21, goal G6): rate limits are waited out as GitHub
 * prescribes and retried a bounded number of times, against the emulator's real limit headers.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FerryOctokit } from "../../src/server/ferry-octokit.js";
import { startWorld, type World } from "../support/github-emulator-world.js";

describe("FerryOctokit under rate limits", () => {
  let world: World;
  beforeEach(async () => {
    world = await startWorld();
  });
  afterEach(async () => {
    await world.emu.close();
  });

  const client = () =>
    new FerryOctokit({
      baseUrl: world.emu.apiUrl,
      auth: world.tokens.mona,
      log: { debug() {}, info() {}, warn() {}, error() {} },
    });
  const repoReads = () =>
    world.emu.requests().filter((request) => request.path === "/repos/acme/config").length;

  it("waits out a secondary rate limit and then succeeds", async () => {
    world.emu.faults.rateLimit({ kind: "secondary", count: 1, retryAfterSeconds: 1 });
    const { data } = await client().rest.repos.get({ owner: "acme", repo: "config" });
    expect(data.name).toBe("config");
    expect(repoReads()).toBe(2);
  });

  it("gives up after a bounded number of retries instead of looping", async () => {
    world.emu.faults.rateLimit({ kind: "secondary", count: 50, retryAfterSeconds: 1 });
    await expect(client().rest.repos.get({ owner: "acme", repo: "config" })).rejects.toMatchObject({
      status: expect.any(Number),
    });
    expect(repoReads()).toBe(4);
  });
});
