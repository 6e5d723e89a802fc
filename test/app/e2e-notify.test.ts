/**
 * End to end: notifications out of GitHub (docs/config.md "Notifications"). A loopback receiver
 * (a real HTTP server, port 0) checks every body's signature as a receiver would; Ferry runs on
 * the GitHub emulator with the real reconciler's Deployment reporter. One replica, then two that
 * both get every webhook, then a receiver that fails twice.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { accounts, repos } from "../../packages/sandbox/src/github/index.js";
import { notifyTargetsFromEnv } from "../../src/core/notify/targets.js";
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  signatureMatches,
} from "../../src/core/notify/signature.js";
import { GitHubDeploymentReporter } from "../../src/adapters/github/deployment-reporter.js";
import { shopConfig } from "../support/app-fakes.js";
import { SECRET, startWorld, type World } from "../support/app-e2e-world.js";
import { waitUntil } from "../support/scan-fleet.js";

const KEY = "e2e-notify-key";
const FAST = { maxAttempts: 5, firstDelayMs: 50, maxDelayMs: 200, maxTotalMs: 30_000 };

interface Received {
  delivery: string;
  event: string;
  valid: boolean;
  body: {
    event: string;
    environment: string;
    changes: { image: string; from?: string; to: string; digest?: string }[];
    approvedBy?: string[];
    requestedBy?: string;
    pull?: { number: number };
  };
  status: number;
}

/** A receiver that answers 500 to its first `failures` requests, and records each with its signature checked. */
async function startReceiver(
  failures = 0,
): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  let left = failures;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const status = left-- > 0 ? 500 : 200;
      received.push({
        delivery: String(req.headers[DELIVERY_HEADER]),
        event: String(req.headers[EVENT_HEADER]),
        valid: signatureMatches(KEY, text, req.headers[SIGNATURE_HEADER] as string | undefined),
        body: JSON.parse(text) as Received["body"],
        status,
      });
      res.writeHead(status).end(status === 200 ? "ok" : "try again");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/ferry`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Both environments tell target `releases` (events: every one, or these). */
/**
 * Until the receiver has heard each of `expected` ("event environment"), then once more quiet: a
 * merge's message is sent when the merge's own webhook is handled, which can come after the step
 * that caused it, and a retry sleeps on the outbox's schedule.
 */
async function heardAll(world: World, received: Received[], expected: string[]): Promise<void> {
  const missing = () => {
    const seen = new Set(received.map((r) => `${r.body.event} ${r.body.environment}`));
    return expected.filter((kind) => !seen.has(kind));
  };
  await waitUntil(() => missing().length === 0, 120_000, `the receiver hearing ${expected.join(", ")}`).catch(
    (error: Error) => {
      const heard = received.map((r) => `${r.body.event} ${r.body.environment} #${r.body.pull?.number}`);
      throw new Error(
        `${error.message}; missing ${missing().join(", ")}; heard ${heard.join(", ") || "nothing"}`,
      );
    },
  );
  await world.settle();
}

function notifyingConfig(registryHost: string, events?: string[]): string {
  const rule = `    notify: [{ target: releases${events ? `, events: [${events.join(", ")}]` : ""} }]\n`;
  return shopConfig({ registry: registryHost, reporters: ["staging-reconciler"], teams: false }).replace(
    /( {4}paths: \[overlays\/(staging|prod)\]\n)/g,
    `$1${rule}`,
  );
}

function notifyOptions(url: string) {
  return {
    targets: notifyTargetsFromEnv({
      FERRY_NOTIFY_RELEASES_URL: url,
      FERRY_NOTIFY_RELEASES_SECRET: KEY,
      FERRY_NOTIFY_RELEASES_OWNERS: "acme",
    }),
    schedule: FAST,
  };
}

/** Forwards each webhook delivery, as signed, to every URL: as if every replica got every event. */
async function startFanOut(targets: () => string[]): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const sends = targets().map(
        (target) =>
          new Promise<number>((resolve) => {
            const url = new URL(target);
            const forward = httpRequest(
              {
                host: url.hostname,
                port: url.port,
                path: url.pathname,
                method: "POST",
                headers: req.headers,
              },
              (answer) => {
                answer.resume();
                resolve(answer.statusCode ?? 0);
              },
            );
            forward.on("error", () => resolve(0));
            forward.end(body);
          }),
      );
      void Promise.all(sends).then((statuses) => res.writeHead(statuses[0] ?? 502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("notifications out of GitHub (end to end)", () => {
  let world: World | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await world?.close();
    world = undefined;
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function promoteAndMerge(w: World): Promise<number> {
    const issue = await w.openIssue();
    await w.as.mona.rest.issues.createComment({
      owner: "acme",
      repo: "config",
      issue_number: issue,
      body: "/promote prod",
    });
    await w.settle();
    const prod = (await w.pulls("open")).find((pull) => pull.head.ref === "ferry/prod")!;
    expect(prod).toBeDefined();
    await w.as.hubot.rest.pulls.createReview({
      owner: "acme",
      repo: "config",
      pull_number: prod.number,
      event: "APPROVE",
    });
    await w.settle();
    const { data } = await w.as.mona.rest.pulls.get({
      owner: "acme",
      repo: "config",
      pull_number: prod.number,
    });
    if (!data.merged)
      await w.as.mona.rest.pulls.merge({
        owner: "acme",
        repo: "config",
        pull_number: prod.number,
        sha: prod.head.sha,
      });
    await w.settle();
    return prod.number;
  }

  function stagingReporter(w: World): GitHubDeploymentReporter {
    const bot = accounts.createUser(w.emu, "staging-reconciler", { type: "Bot" });
    repos.setCollaborator(w.emu, "acme", "config", "staging-reconciler", "write");
    return new GitHubDeploymentReporter({
      repository: "acme/config",
      environment: "staging",
      token: bot.token,
      baseUrl: w.emu.apiUrl,
      instance: "staging",
    });
  }

  const mainHead = async (w: World) =>
    (await w.as.mona.rest.repos.getBranch({ owner: "acme", repo: "config", branch: "main" })).data.commit.sha;

  it("tells a PR opened and merged, prod promoted (with who approved) and the reconciler's failure, each once, signed", async () => {
    const receiver = await startReceiver();
    closers.push(receiver.close);
    world = await startWorld({
      ci: true,
      reporters: ["staging-reconciler"],
      files: (host) => ({ ".github/ferry.yml": notifyingConfig(host) }),
      server: { ferry: { notify: notifyOptions(receiver.url) } },
    });
    const reporter = stagingReporter(world);
    const digest = await world.push("1.8.0");
    await world.settle();
    await reporter.report({
      revision: await mainHead(world),
      state: "success",
      description: "Synced and Healthy",
    });
    await world.settle();
    const prodNumber = await promoteAndMerge(world);
    await reporter.report({
      revision: await mainHead(world),
      state: "failure",
      description: "Degraded: shop 0/2 available",
    });
    await heardAll(world, receiver.received, [
      "degraded staging",
      "merged staging",
      "opened prod",
      "opened staging",
      "promoted prod",
    ]);

    const seen = receiver.received.map((r) => `${r.body.event} ${r.body.environment}`);
    expect(seen.sort()).toEqual([
      "degraded staging",
      "merged staging",
      "opened prod",
      "opened staging",
      "promoted prod",
    ]);
    expect(receiver.received.every((r) => r.valid && r.status === 200)).toBe(true);
    expect(new Set(receiver.received.map((r) => r.delivery)).size).toBe(receiver.received.length);
    for (const r of receiver.received) expect(r.event).toBe(r.body.event);
    const promoted = receiver.received.find((r) => r.body.event === "promoted")!;
    expect(promoted.body.changes).toEqual([
      expect.objectContaining({ image: "shop", from: "1.7.0", to: "1.8.0", digest }),
    ]);
    expect(promoted.body.approvedBy).toEqual(["hubot"]);
    expect(promoted.body.requestedBy).toBe("mona");
    expect(promoted.body.pull?.number).toBe(prodNumber);
  });

  it("with two replicas that both get every webhook, each message arrives once", async () => {
    const receiver = await startReceiver();
    closers.push(receiver.close);
    const urls: string[] = [];
    const fanOut = await startFanOut(() => urls);
    closers.push(fanOut.close);
    world = await startWorld({
      ci: true,
      files: (host) => ({ ".github/ferry.yml": notifyingConfig(host, ["opened", "merged", "promoted"]) }),
      server: { ferry: { notify: notifyOptions(receiver.url) } },
    });
    const replica = await world.replica();
    urls.push(`${world.server.url}/api/github/webhooks`, `${replica.url}/api/github/webhooks`);
    accounts.setWebhook(world.emu, world.appId, fanOut.url, SECRET);
    world.registry.addNotificationEndpoint({
      url: `${replica.url}/registry/distribution`,
      headers: { Authorization: "e2e-registry-secret" },
    });
    await world.push("1.8.0");
    await world.settle();
    await promoteAndMerge(world);
    await heardAll(world, receiver.received, [
      "merged staging",
      "opened prod",
      "opened staging",
      "promoted prod",
    ]);

    // Every event the replicas saw arrives once: no delivery id twice, no PR's event twice, every
    // kind there. (Two replicas syncing at once may open a second staging PR: its own event.)
    const seen = new Set(receiver.received.map((r) => `${r.body.event} ${r.body.environment}`));
    expect([...seen].sort()).toEqual(["merged staging", "opened prod", "opened staging", "promoted prod"]);
    const deliveries = receiver.received.map((r) => r.delivery);
    expect(new Set(deliveries).size).toBe(deliveries.length);
    const pulls = receiver.received.map((r) => `${r.body.event} #${r.body.pull?.number}`);
    expect(new Set(pulls).size).toBe(pulls.length);
    expect(receiver.received.every((r) => r.valid)).toBe(true);
  });

  it("a receiver that answers 500 twice gets the message a third time, with the same delivery id, and once only", async () => {
    const receiver = await startReceiver(2);
    closers.push(receiver.close);
    world = await startWorld({
      ci: true,
      files: (host) => ({ ".github/ferry.yml": notifyingConfig(host, ["opened"]) }),
      server: { ferry: { notify: notifyOptions(receiver.url) } },
    });
    await world.push("1.8.0");
    await world.settle();
    expect(receiver.received.map((r) => r.status)).toEqual([500, 500, 200]);
    expect(new Set(receiver.received.map((r) => r.delivery)).size).toBe(1);
    expect(receiver.received.every((r) => r.valid && r.body.event === "opened")).toBe(true);
  });
});
