/**
 * A PR from a fork that edits `.github/ferry.yml` gets the `ferry/config` check, safely
 * (README "The GitHub App"): the config at the fork's head commit is read through the API (GitHub
 * serves a fork PR's head commit from the base repository), checked within the same bounds, and
 * never used: nothing it names is fetched, no promotion follows from it. The emulator has no forks,
 * so the PR is delivered as GitHub delivers one from a fork (`head.repo` is mallory's), at a head
 * commit that no branch of the base repository holds, through the real webhook route.
 */
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { actAs, inspect } from "../../packages/sandbox/src/github/index.js";
import { SECRET, startWorld, type World } from "../support/app-e2e-world.js";

const CONFIG = ".github/ferry.yml";

describe("ferry/config on a fork's PR (end to end)", { timeout: 240_000 }, () => {
  let world: World;
  let listener: Server | undefined;
  afterEach(async () => {
    await world.close();
    await new Promise((resolve) => (listener ? listener.close(resolve) : resolve(undefined)));
  });

  /** Opens a person's PR editing the config, then delivers a fork's push of `forkConfig` to it; returns the fork's head SHA. */
  async function forkPush(forkConfig: string): Promise<string> {
    const mona = world.as.mona;
    const text = (await inspect.readFile(world.emu, "acme", "config", "main", CONFIG))!;
    const branchHead = await actAs.commit(
      world.emu,
      "acme",
      "config",
      "from-fork",
      { [CONFIG]: `${text}# reviewed\n` },
      "Touch the config",
      { as: "mona" },
    );
    await actAs.openPullRequest(world.emu, "acme", "config", {
      head: "from-fork",
      title: "Fork",
      as: "mona",
    });
    await world.settle();
    // The fork's next commit: in the base repository's object store (as refs/pull/N/head is on
    // GitHub), on no branch of it.
    const { data: parent } = await mona.rest.git.getCommit({
      owner: "acme",
      repo: "config",
      commit_sha: branchHead,
    });
    const { data: tree } = await mona.rest.git.createTree({
      owner: "acme",
      repo: "config",
      base_tree: parent.tree.sha,
      tree: [{ path: CONFIG, mode: "100644", type: "blob", content: forkConfig }],
    });
    const { data: commit } = await mona.rest.git.createCommit({
      owner: "acme",
      repo: "config",
      message: "fork push",
      tree: tree.sha,
      parents: [branchHead],
    });
    const opened = world.emu.webhooks
      .deliveries()
      .find(
        (d) =>
          d.event === "pull_request" &&
          d.action === "opened" &&
          JSON.stringify(d.payload).includes("from-fork"),
      )!;
    const payload = structuredClone(opened.payload) as {
      action: string;
      pull_request: { head: { sha: string; repo: { full_name: string; owner: { login: string } } } };
    };
    payload.action = "synchronize";
    payload.pull_request.head.sha = commit.sha;
    payload.pull_request.head.repo.full_name = "mallory/config";
    payload.pull_request.head.repo.owner.login = "mallory";
    const body = JSON.stringify(payload);
    const response = await fetch(`${world.server.url}/api/github/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "pull_request",
        "x-github-delivery": `fork-${commit.sha}`,
        "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`,
      },
      body,
    });
    expect(response.status).toBeLessThan(300);
    await world.settle();
    return commit.sha;
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
    const head = await forkPush(broken);
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
    const head = await forkPush(evil);
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
  });
});
