/**
 * `GET /status` walks every installation and repository: answers are reused for a short while and
 * the walk is bounded, so scrapes cannot turn into a stream of GitHub requests.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startWorld, type World } from "../../support/app-e2e-world.js";

describe("GET /status", { timeout: 30_000 }, () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  const status = async () =>
    (await (await fetch(`${world.server.url}/status`)).json()) as Record<
      string,
      { running: Record<string, Record<string, { tag?: string }>> }
    >;

  it("answers repeated and concurrent requests within 10 s from one walk of GitHub, and walks again after", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    world = await startWorld({ ci: false, server: { ferry: { now: () => now } } });
    const start = world.emu.requests().length;
    const [first, second] = await Promise.all([status(), status()]);
    const afterFirst = world.appRequests(start).length;
    expect(afterFirst).toBeGreaterThan(0);
    expect(second).toEqual(first);
    now = new Date(now.getTime() + 9_000);
    expect(await status()).toEqual(first);
    expect(world.appRequests(start).length).toBe(afterFirst);

    now = new Date(now.getTime() + 2_000);
    await status();
    expect(world.appRequests(start).length).toBeGreaterThan(afterFirst);
  });

  it("visits at most the configured number of repositories", async () => {
    world = await startWorld({ ci: false, server: { ferry: { statusMaxRepositories: 1 } } });
    const files: Record<string, string> = {};
    for (const path of [
      ".github/ferry.yml",
      "overlays/staging/kustomization.yaml",
      "overlays/prod/kustomization.yaml",
    ]) {
      files[path] = (await world.emu.readFile("acme", "config", "main", path))!;
    }
    await world.emu.createRepo("acme", "config-two", { files });
    // Repositories only: "ferry:scan" is the replica's scan and membership report.
    expect(Object.keys(await status()).filter((key) => key !== "ferry:scan")).toHaveLength(1);
  });
});
