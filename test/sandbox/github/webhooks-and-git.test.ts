import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver } from "../../support/github-contract-kit.js";
import { installApp, startWorld, type World } from "../../support/github-emulator-world.js";
import { accounts, actAs, inspect, repos } from "../../../packages/sandbox/src/github/index.js";

const run = promisify(execFile);
const owner = "acme";
const repo = "config";

function git(cwd: string, ...args: string[]) {
  return run(
    "git",
    ["-c", "user.name=Hubot", "-c", "user.email=hubot@example.com", "-c", "protocol.version=2", ...args],
    {
      cwd,
      env: {
        PATH: process.env.PATH,
        HOME: cwd,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_TERMINAL_PROMPT: "0",
      },
    },
  );
}

function withToken(url: string, user: string, token: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = token;
  return u.toString();
}

describe("webhook deliveries and git smart HTTP", () => {
  let world: World;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let ferry: Awaited<ReturnType<typeof installApp>>;
  let workdir: string;

  beforeAll(async () => {
    world = await startWorld();
    await repos.createRepo(world.emu, "acme", "private-config", {
      private: true,
      files: { "a.txt": "a\n" },
      collaborators: { hubot: "write" },
    });
    receiver = await startReceiver("hook-secret");
    ferry = await installApp(world, {
      webhookUrl: receiver.url,
      webhookSecret: "hook-secret",
      permissions: { contents: "read", issues: "write", pull_requests: "read" },
    });
    workdir = await mkdtemp(join(tmpdir(), "ferry-gh-test-"));
  });
  afterAll(async () => {
    await world.emu.close();
    await receiver.close();
    await rm(workdir, { recursive: true, force: true });
  });

  it("delivers comment events as the commenting user, after the API call returns", async () => {
    await world.emu.idle();
    const before = receiver.received.length;
    const { data: issue } = await world.as("hubot").rest.issues.create({ owner, repo, title: "promote" });
    const { id } = await actAs.comment(world.emu, owner, repo, issue.number, "/promote prod", { as: "eve" });
    actAs.editComment(world.emu, owner, repo, id, "/promote prod shop@1.8.0", { as: "eve" });
    await world.emu.idle();
    const hooks = receiver.received.slice(before).filter((h) => h.event === "issue_comment");
    expect(
      hooks.map((h) => [
        h.payload.action,
        (h.payload.sender as { login: string }).login,
        (h.payload.comment as { body: string }).body,
      ]),
    ).toEqual([
      ["created", "eve", "/promote prod"],
      ["edited", "eve", "/promote prod shop@1.8.0"],
    ]);
    expect(hooks[0]!.payload.installation).toEqual({ id: ferry.installationId, node_id: expect.any(String) });
    expect(hooks.every((h) => h.signatureValid)).toBe(true);
  });

  it("records each delivery with the receiver's status and redelivers under the same id", async () => {
    await world.emu.idle();
    const last = world.emu.webhooks.deliveries().at(-1)!;
    expect(last.status).toBe(200);
    const again = world.emu.webhooks.redeliver(last.id);
    await world.emu.idle();
    expect(again.id).toBe(last.id);
    expect(receiver.received.filter((h) => h.delivery === last.id)).toHaveLength(2);
    expect(
      world.emu.webhooks
        .deliveries()
        .filter((d) => d.id === last.id)
        .map((d) => d.redelivery),
    ).toEqual([false, true]);
  });

  it("records a failed delivery when the receiver is down", async () => {
    const down = accounts.createApp(world.emu, {
      slug: "down",
      webhookUrl: "http://127.0.0.1:1/hooks",
      webhookSecret: "x",
    });
    accounts.installApp(world.emu, down.id, "acme");
    await world.emu.idle();
    const delivery = world.emu.webhooks.deliveries().find((d) => d.appId === down.id)!;
    expect(delivery.status).toBe(0);
    expect(delivery.error).toBeDefined();
  });

  it("clones a private repository with an installation token and refuses it without one", async () => {
    const url = world.emu.gitUrl(owner, "private-config");
    await expect(git(workdir, "clone", "--quiet", url, "anon")).rejects.toThrow();
    await git(workdir, "clone", "--quiet", withToken(url, "x-access-token", ferry.token), "private");
    expect(await readFile(join(workdir, "private", "a.txt"), "utf8")).toBe("a\n");
  });

  it("accepts a push from a writer, fires a push event, and synchronizes the open PR", async () => {
    await actAs.commit(world.emu, owner, repo, "feature", { "f.txt": "1\n" }, "feature", { as: "hubot" });
    const { data: pr } = await world
      .as("hubot")
      .rest.pulls.create({ owner, repo, head: "feature", base: "main", title: "t" });
    const dir = join(workdir, "push");
    await git(
      workdir,
      "clone",
      "--quiet",
      "--branch",
      "feature",
      withToken(world.emu.gitUrl(owner, repo), "hubot", world.tokens.hubot),
      "push",
    );
    await writeFile(join(dir, "f.txt"), "2\n");
    await git(dir, "commit", "--quiet", "-am", "pushed by hand");
    await world.emu.idle();
    const before = receiver.received.length;
    await git(dir, "push", "--quiet", "origin", "feature");
    const { stdout } = await git(dir, "rev-parse", "HEAD");
    await world.emu.idle();
    const hooks = receiver.received.slice(before);
    const push = hooks.find((h) => h.event === "push")!;
    expect(push.payload).toMatchObject({
      ref: "refs/heads/feature",
      after: stdout.trim(),
      pusher: { name: "hubot" },
    });
    expect(hooks.find((h) => h.event === "pull_request")?.payload).toMatchObject({
      action: "synchronize",
      after: stdout.trim(),
    });
    expect((await inspect.getPull(world.emu, owner, repo, pr.number)).head.sha).toBe(stdout.trim());
  });

  it("delivers only events the installation has a permission for", async () => {
    await world.emu.idle();
    const before = receiver.received.length;
    actAs.setStatus(world.emu, owner, repo, (await inspect.branchSha(world.emu, owner, repo, "main"))!, {
      context: "ci",
      state: "success",
    });
    await actAs.comment(world.emu, owner, repo, 1, "still listening", { as: "mona" });
    await world.emu.idle();
    expect(receiver.received.slice(before).map((h) => h.event)).toEqual(["issue_comment"]);
  });

  it("refuses a push from a user without write access", async () => {
    const dir = join(workdir, "eve");
    await git(
      workdir,
      "clone",
      "--quiet",
      withToken(world.emu.gitUrl(owner, repo), "eve", world.tokens.eve),
      "eve",
    );
    await writeFile(join(dir, "README.md"), "eve was here\n");
    await git(dir, "commit", "--quiet", "-am", "eve");
    await expect(git(dir, "push", "--quiet", "origin", "main")).rejects.toThrow();
    expect(await inspect.readFile(world.emu, owner, repo, "main", "README.md")).toBe("config\n");
  });
});
