/**
 * GitHub behaviours a client easily gets wrong, end to end:
 * - the contents API's `ref` is "The name of the commit/branch/tag"
 *   (https://docs.github.com/en/rest/repos/contents#get-repository-content), so the holds on
 *   `refs/ferry/state` are read at the commit `GET /git/ref/ferry/state` gives;
 * - a rate limit may come as 403 as well as 429, with `retry-after` or `x-ratelimit-remaining: 0`
 *   ("If you exceed your primary rate limit, you will receive a 403 or 429 response",
 *   https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit):
 *   the work is retried, not dropped until the next scan.
 */
import { afterEach, describe, expect, it } from "vitest";
import { actAs, inspect, repos } from "../../packages/sandbox/src/github/index.js";
import { commandReactions, startWorld, type World } from "../support/app-e2e-world.js";

describe("holds on the state ref, read as GitHub documents the contents API", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  it("a held staging gets no PR for a new tag, and /unhold lets it through", async () => {
    world = await startWorld({ ci: false });
    // No dashboard to fall back on: the state ref alone keeps the holds.
    repos.setRepoSettings(world.emu, "acme", "config", { hasIssues: false });
    await actAs.createBranch(world.emu, "acme", "config", "docs", "main", { as: "mona" });
    await actAs.commit(world.emu, "acme", "config", "docs", { "README.md": "docs\n" }, "docs", {
      as: "mona",
    });
    const docs = await actAs.openPullRequest(world.emu, "acme", "config", { head: "docs", as: "mona" });
    expect(await commandReactions(world, docs, "/hold staging")).toEqual(["eyes", "rocket"]);
    expect(await inspect.readFile(world.emu, "acme", "config", "refs/ferry/state", "state.json")).toContain(
      "staging",
    );
    await world.push("1.8.0");
    await world.server.scanNow();
    await world.settle();
    expect((await world.pulls("open")).map((pull) => pull.head.ref)).toEqual(["docs"]);
    expect(await commandReactions(world, docs, "/unhold staging")).toEqual(["eyes", "rocket"]);
    await world.server.scanNow();
    await world.settle();
    expect((await world.pulls("open")).map((pull) => pull.title)).toContain("Promote shop 1.8.0 to staging");
  });
});

describe("a 403 rate limit while opening the PR", () => {
  let world: World;
  afterEach(async () => {
    await world.close();
  });

  /** The open PRs' titles once one is open, or after a generous deadline. */
  async function openTitles(): Promise<string[]> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      await world.settle();
      const titles = (await world.pulls("open")).map((pull) => pull.title);
      if (titles.length > 0 || Date.now() > deadline) return titles;
    }
  }

  for (const kind of ["secondary", "primary"] as const)
    it(`is retried after the wait GitHub asks for (${kind} limit), not left to the next scan`, async () => {
      world = await startWorld({
        ci: false,
        server: { ferry: { workRetry: { attempts: 4, firstDelayMs: 100, maxDelayMs: 10_000 } } },
      });
      world.emu.faults.rateLimit({
        kind,
        count: 1,
        retryAfterSeconds: 1,
        route: "POST /repos/acme/config/pulls",
      });
      await world.push("1.8.0");
      expect(await openTitles()).toEqual(["Promote shop 1.8.0 to staging"]);
    });
});
