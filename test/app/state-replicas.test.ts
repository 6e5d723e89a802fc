/**
 * Holds from several replicas at once, through the real adapter against the GitHub emulator: the
 * state ref's compare-and-swap (POST /git/refs, PATCH without force) loses no update, and two Ferry
 * servers handling `/hold` comments delivered at the same moment both leave their hold.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createGitHubRepo } from "../../src/adapters/github/github-repo.js";
import { STATE_FILE, STATE_REF } from "../../src/app/github-port.js";
import { loadRepoConfig } from "../../src/app/load-repo-config.js";
import { updateState } from "../../src/app/update-state.js";
import { DASHBOARD_TITLE, parseState } from "../../src/core/pr/dashboard.js";
import { parseStateFile } from "../../src/core/state/ferry-state.js";
import { installApp, startWorld as startEmulatorWorld } from "../support/github-emulator-world.js";
import { startWorld, type World } from "../support/app-e2e-world.js";
import { configRepo, FakeRegistry, fakeDeps } from "../support/app-fakes.js";
import { accounts, inspect } from "../../packages/sandbox/src/github/index.js";

describe("the state ref through the adapter", () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  async function adapterWorld() {
    const world = await startEmulatorWorld({ files: configRepo() });
    close = () => world.emu.close();
    const app = await installApp(world);
    return { world, github: () => createGitHubRepo(app.installation, "acme", "config") };
  }

  it("creates the ref, moves it only from the commit it was read at, and reads any of its commits", async () => {
    const { github } = await adapterWorld();
    const port = github();
    expect(await port.readFile(STATE_REF, STATE_FILE)).toBeUndefined();
    expect(await port.stateHead()).toBeUndefined();
    expect(await port.writeStateCommit(undefined, "one\n", "state")).toBe("written");
    expect(await port.writeStateCommit(undefined, "rival\n", "state")).toBe("conflict");
    const first = (await port.stateHead())!;
    expect(await port.writeStateCommit(first, "two\n", "state")).toBe("written");
    expect(await port.writeStateCommit(first, "stale\n", "state")).toBe("conflict");
    expect(await port.readFile(STATE_REF, STATE_FILE)).toBe("two\n");
    expect(await port.readFile(first, STATE_FILE)).toBe("one\n");
  });

  it("keeps every hold when five replicas each add one at the same time", async () => {
    const { world, github } = await adapterWorld();
    const registry = new FakeRegistry();
    const environments = ["env-a", "env-b", "env-c", "env-d", "env-e"];
    const results = await Promise.allSettled(
      environments.map(async (environment) => {
        const deps = fakeDeps(github(), registry);
        const loaded = await loadRepoConfig(deps);
        if (!loaded.ok) throw new Error("config did not load");
        await updateState(deps, loaded, (state) => {
          state.holds[environment] = { by: "mona", at: "2026-01-01T00:00:00.000Z", reason: "hold" };
        });
      }),
    );
    expect(results.filter((result) => result.status === "rejected")).toEqual([]);
    const stored = parseStateFile(
      await inspect.readFile(world.emu, "acme", "config", STATE_REF, "state.json"),
    );
    expect(Object.keys(stored.holds).sort()).toEqual(environments);
  });
});

/**
 * A load balancer in front of two replicas that waits for `pair` deliveries and then forwards
 * them at once, one to each replica (GitHub's delivery itself is answered 202 straight away).
 * Later deliveries go to the first replica.
 */
async function startPairingBalancer(targets: [string, string], pair = 2): Promise<Server> {
  const held: { headers: IncomingHttpHeaders; body: Buffer; path: string }[] = [];
  const forward = (target: string, delivery: (typeof held)[number]) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(delivery.headers))
      if (typeof value === "string" && (name.startsWith("x-") || name === "content-type"))
        headers[name] = value;
    return fetch(`${target}${delivery.path}`, { method: "POST", headers, body: delivery.body });
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const delivery = { headers: request.headers, body: Buffer.concat(chunks), path: request.url ?? "/" };
      response.writeHead(202).end();
      if (held.length >= pair) {
        void forward(targets[0], delivery);
        return;
      }
      held.push(delivery);
      if (held.length === pair)
        for (const [index, each] of held.entries()) void forward(targets[index % 2]!, each);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

describe("two Ferry replicas", () => {
  let world: World;
  let balancer: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => balancer?.close(resolve) ?? resolve(undefined));
    await world.close();
  });

  it("both keep their hold when /hold staging and /hold prod reach different replicas at the same moment", async () => {
    world = await startWorld({ ci: true });
    const second = await world.replica();
    const issue = await world.openIssue();
    await world.settle();
    balancer = await startPairingBalancer([world.server.url, second.url]);
    world.onlyEvents(["issue_comment"]);
    accounts.setWebhook(
      world.emu,
      world.appId,
      `http://127.0.0.1:${(balancer.address() as AddressInfo).port}/api/github/webhooks`,
    );
    for (const body of ["/hold staging", "/hold prod"])
      await world.as.mona.rest.issues.createComment({
        owner: "acme",
        repo: "config",
        issue_number: issue,
        body,
      });
    await world.settle();
    await world.settle();
    const stored = parseStateFile(
      await inspect.readFile(world.emu, "acme", "config", STATE_REF, "state.json"),
    );
    expect(Object.keys(stored.holds).sort()).toEqual(["prod", "staging"]);
    const { data: issues } = await world.as.mona.rest.issues.listForRepo({
      owner: "acme",
      repo: "config",
      state: "open",
    });
    const dashboards = issues.filter((candidate) => candidate.title === DASHBOARD_TITLE);
    expect(dashboards.length).toBeGreaterThan(0);
    for (const dashboard of dashboards)
      expect(Object.keys(parseState(dashboard.body).holds).sort()).toEqual(["prod", "staging"]);
  });
});
