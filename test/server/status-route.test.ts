/**
 * `GET /status` names repositories, versions and who set holds: it is served only to a bearer
 * token on the public listener, or on a listener of its own at an internal address. It walks every
 * installation and repository: answers are reused for a short while and the walk is bounded, so
 * scrapes cannot turn into a stream of GitHub requests.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startWorld, type World } from "../support/app-e2e-world.js";
import { setTagOnMain } from "../support/github-emulator-world.js";
import { inspect, repos } from "../../packages/sandbox/src/github/index.js";

const TOKEN = "status-token-for-tests";

describe("GET /status", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  const statusWithScan = async () =>
    (await (
      await fetch(`${world.server.url}/status`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as Record<string, unknown>;
  /** Repositories only: "ferry:scan" is the replica's own scan and membership report. */
  const status = async () => {
    const { "ferry:scan": _scan, ...repositories } = await statusWithScan();
    return repositories as Record<string, { running: Record<string, Record<string, { tag?: string }>> }>;
  };

  const pinStaging = (tag: string) => setTagOnMain(world.emu, "staging", tag);
  /** Polls until `probe` gives a value (generous for a slow machine: 60 s). */
  const eventually = async <T>(probe: () => Promise<T | undefined>): Promise<T> => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error("status: the refreshed answer did not come in 60 s");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  it("reports the scan's members, this replica's shard, scan lag and budget use under \"ferry:scan\"", async () => {
    world = await startWorld({ ci: false, server: { status: { token: TOKEN } } });
    const before = (await statusWithScan())["ferry:scan"] as Record<string, unknown>;
    expect(before).toMatchObject({ mode: "single", rounds: 0, lagSeconds: null, shardSize: 0 });
    expect(before.members).toEqual([before.self]);
    await world.server.scanNow();
    const after = (await statusWithScan())["ferry:scan"] as Record<string, unknown>;
    expect(after).toMatchObject({ mode: "single", rounds: 1, shardSize: 1 });
    expect(after.registryBudgets).toBeTypeOf("object");
    expect(after.githubWriteBudgets).toBeTypeOf("object");
  });

  it("answers repeated and concurrent requests within 10 s from one walk of GitHub, then serves that answer while one walk refreshes it", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    world = await startWorld({ ci: false, server: { status: { token: TOKEN }, ferry: { now: () => now } } });
    const start = world.emu.requests().length;
    const [first, second] = await Promise.all([status(), status()]);
    const afterFirst = world.appRequests(start).length;
    expect(afterFirst).toBeGreaterThan(0);
    expect(second).toEqual(first);
    expect(first["acme/config"]!.running.staging!.shop!.tag).toBe("1.7.0");
    now = new Date(now.getTime() + 9_000);
    expect(await status()).toEqual(first);
    expect(world.appRequests(start).length).toBe(afterFirst);

    // Staging moves on; past the TTL the next read is answered at once from the last walk, and
    // starts one walk (two reads at once still start one).
    await pinStaging("1.7.5");
    now = new Date(now.getTime() + 2_000);
    const [stale, alsoStale] = await Promise.all([status(), status()]);
    expect(stale).toEqual(first);
    expect(alsoStale).toEqual(first);
    const refreshed = await eventually(async () => {
      const answer = await status();
      return answer["acme/config"]!.running.staging!.shop!.tag === "1.7.5" ? answer : undefined;
    });
    expect(refreshed["acme/config"]!.running.staging!.shop!.tag).toBe("1.7.5");
    const afterSecond = world.appRequests(start).length;
    expect(afterSecond - afterFirst).toBeLessThanOrEqual(afterFirst);
  });

  it("waits for the walk when the last answer is more than a minute past its TTL", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    world = await startWorld({ ci: false, server: { status: { token: TOKEN }, ferry: { now: () => now } } });
    expect((await status())["acme/config"]!.running.staging!.shop!.tag).toBe("1.7.0");
    await pinStaging("1.7.5");
    now = new Date(now.getTime() + 71_000);
    expect((await status())["acme/config"]!.running.staging!.shop!.tag).toBe("1.7.5");
  });

  it("keeps serving the last answer when a refreshing walk fails, and answers from the next walk that succeeds", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    world = await startWorld({ ci: false, server: { status: { token: TOKEN }, ferry: { now: () => now } } });
    const first = await status();
    await pinStaging("1.7.5");
    world.emu.faults.serverError({ status: 502, count: 1_000 });
    now = new Date(now.getTime() + 11_000);
    expect(await status()).toEqual(first);
    await world.server.idle();
    now = new Date(now.getTime() + 1_000);
    expect(await status()).toEqual(first);
    world.emu.faults.clear();
    const refreshed = await eventually(async () => {
      const answer = await status();
      return answer["acme/config"]!.running.staging!.shop!.tag === "1.7.5" ? answer : undefined;
    });
    expect(refreshed["acme/config"]!.running.staging!.shop!.tag).toBe("1.7.5");
  });

  it("visits at most the configured number of repositories", async () => {
    world = await startWorld({
      ci: false,
      server: { status: { token: TOKEN }, ferry: { statusMaxRepositories: 1 } },
    });
    const files: Record<string, string> = {};
    for (const path of [
      ".github/ferry.yml",
      "overlays/staging/kustomization.yaml",
      "overlays/prod/kustomization.yaml",
    ]) {
      files[path] = (await inspect.readFile(world.emu, "acme", "config", "main", path))!;
    }
    await repos.createRepo(world.emu, "acme", "config-two", { files });
    expect(Object.keys(await status())).toHaveLength(1);
  });

  it("does not exist on the public listener when neither a token nor a status listener is configured", async () => {
    world = await startWorld({ ci: false });
    const start = world.emu.requests().length;
    const response = await fetch(`${world.server.url}/status`);
    expect(response.status).toBe(404);
    expect(await response.text()).not.toContain("acme/config");
    expect(world.appRequests(start).filter((request) => request.path !== "/app")).toEqual([]);
  });

  it("answers the public listener's /status only to the configured bearer token", async () => {
    world = await startWorld({ ci: false, server: { status: { token: TOKEN } } });
    const start = world.emu.requests().length;
    for (const authorization of [undefined, "Bearer wrong-token", TOKEN, `Basic ${TOKEN}`]) {
      const response = await fetch(`${world.server.url}/status`, {
        headers: authorization ? { authorization } : {},
      });
      expect(response.status, authorization ?? "no header").toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(await response.text()).not.toContain("acme/config");
    }
    expect(world.appRequests(start).filter((request) => request.path !== "/app")).toEqual([]);
    expect(Object.keys(await status())).toEqual(["acme/config"]);
  });

  it("serves /status without a token on the internal status listener, and not on the public one", async () => {
    world = await startWorld({ ci: false, server: { status: { listen: { host: "127.0.0.1", port: 0 } } } });
    expect(world.server.statusUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/status$/);
    expect((await fetch(`${world.server.url}/status`)).status).toBe(404);
    const response = await fetch(world.server.statusUrl!);
    expect(response.status).toBe(200);
    expect(Object.keys((await response.json()) as object)).toEqual(["acme/config", "ferry:scan"]);
  });

  it("keeps /healthz and /metrics public, and /metrics names no repository", async () => {
    world = await startWorld({ ci: false });
    await world.server.scanNow();
    expect((await fetch(`${world.server.url}/healthz`)).status).toBe(200);
    const metrics = await fetch(`${world.server.url}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain("ferry_scans_total 1");
    expect(text).not.toMatch(/acme|config/);
  });
});
