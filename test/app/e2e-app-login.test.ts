/**
 * End to end: Ferry's own login (`GET /app`) decides which PRs are its own (docs/reliability.md
 * row 81). While GitHub will not say it, no entry path starts work: a registry hint opens no PR
 * blind; once the login is known, the same hint path promotes as usual.
 */
import { afterEach, describe, expect, it } from "vitest";
import { inspect } from "../../packages/sandbox/src/github/index.js";
import { startWorld, type World } from "../support/app-e2e-world.js";
import { waitUntil } from "../support/scan-fleet.js";

const APP = /^GET \/app$/;

describe("Ferry's own login unknown (GET /app failing)", () => {
  let world: World | undefined;
  afterEach(async () => {
    await world?.close();
    world = undefined;
  });

  it("a registry hint opens no PR until the login is known, then promotes as usual", async () => {
    world = await startWorld({
      ci: true,
      // Armed before Ferry starts, so that its start-up lookup fails too.
      registry: (emu) => {
        emu.faults.serverError({ route: APP, count: 1_000_000 });
        return {};
      },
    });
    const w = world;
    const lookups = () => w.emu.requests().filter((r) => r.method === "GET" && r.path === "/app");
    const before = lookups().length;
    await w.push("1.8.0");
    // The hint asked for the login again, and was told no.
    await waitUntil(() => lookups().length > before, 60_000, "a lookup of the app's login after the push");
    await w.settle();
    expect(lookups().every((r) => r.status === 502)).toBe(true);
    expect(await w.pulls("all")).toEqual([]);
    // Nothing written to the repository: no branch, no commit, no comment.
    expect(w.emu.requests().filter((r) => r.method !== "GET" && r.path.startsWith("/repos/"))).toEqual([]);

    w.emu.faults.clear();
    await w.push("1.9.0");
    const staging = () =>
      inspect.readFile(w.emu, "acme", "config", "main", "overlays/staging/kustomization.yaml");
    await waitUntil(
      async () => (await staging())?.includes('newTag: "1.9.0"') === true,
      120_000,
      "staging at 1.9.0 on main",
    );
    const pulls = await w.pulls("all");
    expect(pulls.length).toBeGreaterThan(0);
    for (const pull of pulls) {
      const { data } = await w.as.mona.rest.issues.listComments({
        owner: "acme",
        repo: "config",
        issue_number: pull.number,
      });
      expect(data.map((comment) => comment.body)).not.toContainEqual(
        expect.stringContaining("Ferry did not write"),
      );
    }
  });
});
