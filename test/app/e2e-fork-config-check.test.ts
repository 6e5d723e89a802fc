/**
 * A PR from a fork that edits `.github/ferry.yml` gets the `ferry/config` check, safely
 * (README "The GitHub App"): the config at the fork's head commit is read through the API (GitHub
 * serves a fork PR's head commit from the base repository), checked within the same bounds, and
 * never used: nothing it names is fetched, no promotion follows from it. eve forks acme/config in
 * the emulator, pushes to her fork and opens the PR from it, as on GitHub.
 */
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { actAs, inspect } from "../../packages/sandbox/src/github/index.js";
import { startWorld, type World } from "../support/app-e2e-world.js";

const CONFIG = ".github/ferry.yml";

describe("ferry/config on a fork's PR (end to end)", { timeout: 240_000 }, () => {
  let world: World;
  let listener: Server | undefined;
  afterEach(async () => {
    await world.close();
    await new Promise((resolve) => (listener ? listener.close(resolve) : resolve(undefined)));
  });

  /** eve's fork of acme/config, a commit of `forkConfig` on its branch, and her PR from it; returns the head SHA. */
  async function forkPull(forkConfig: string): Promise<string> {
    const eve = world.as.eve;
    await eve.rest.repos.createFork({ owner: "acme", repo: "config" });
    const head = await actAs.commit(
      world.emu,
      "eve",
      "config",
      "from-fork",
      { [CONFIG]: forkConfig },
      "Change the config",
      { as: "eve" },
    );
    const { data: pull } = await eve.rest.pulls.create({
      owner: "acme",
      repo: "config",
      head: "eve:from-fork",
      base: "main",
      title: "From a fork",
    });
    expect(pull.head.repo?.full_name).toBe("eve/config");
    await world.settle();
    return head;
  }

  const configRun = async (sha: string) => {
    const { data } = await world.as.mona.rest.checks.listForRef({ owner: "acme", repo: "config", ref: sha });
    return data.check_runs.find((run) => run.name === "ferry/config");
  };

  it("fails a broken config at the fork's head on the offending line", async () => {
    world = await startWorld({ ci: false });
    const text = (await inspect.readFile(world.emu, "acme", "config", "main", CONFIG))!;
    const broken = text.replace(/paths: \[overlays\/staging\]|paths:\n(\s+)- overlays\/staging/, "paths: 5");
    expect(broken).not.toBe(text);
    const head = await forkPull(broken);
    const run = await configRun(head);
    expect(run?.conclusion).toBe("failure");
    const { data: annotations } = await world.as.mona.rest.checks.listAnnotations({
      owner: "acme",
      repo: "config",
      check_run_id: run!.id,
    });
    const line = broken.split("\n").findIndex((l) => l.includes("paths: 5")) + 1;
    expect(annotations).toContainEqual(
      expect.objectContaining({ path: CONFIG, start_line: line, annotation_level: "failure" }),
    );
  });

  it("checks a fork's config naming a registry on an internal address without contacting it or promoting anything", async () => {
    world = await startWorld({ ci: false });
    let connections = 0;
    listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener!.listen(0, "127.0.0.1", resolve));
    const port = (listener.address() as { port: number }).port;
    const text = (await inspect.readFile(world.emu, "acme", "config", "main", CONFIG))!;
    const evil = `${text.replace(/repository: \S+/, `repository: 127.0.0.1:${port}/evil/app`)}`;
    expect(evil).toContain(`127.0.0.1:${port}`);
    const pullsBefore = (await world.as.mona.rest.pulls.list({ owner: "acme", repo: "config", state: "all" }))
      .data.length;
    const start = world.emu.requests().length;
    const head = await forkPull(evil);
    const run = await configRun(head);
    expect(run?.status).toBe("completed");
    expect(connections).toBe(0);
    // Nothing but check runs written for it (and the installation token): no branch, PR or comment.
    const writes = world
      .appRequests(start)
      .filter(
        (request) =>
          request.method !== "GET" &&
          !request.path.includes("/check-runs") &&
          !request.path.endsWith("/access_tokens"),
      );
    expect(writes).toEqual([]);
    const pullsAfter = (await world.as.mona.rest.pulls.list({ owner: "acme", repo: "config", state: "all" }))
      .data.length;
    expect(pullsAfter).toBe(pullsBefore + 1);
    // Nor read anything of the fork itself: only the base repository serves its head.
    expect(
      world.emu
        .requests()
        .slice(start)
        .filter((r) => r.actor.startsWith("app") || r.actor.includes("[bot]"))
        .filter((r) => r.path.includes("/repos/eve/")),
    ).toEqual([]);
  });
});
