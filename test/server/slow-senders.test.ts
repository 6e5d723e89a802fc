/**
 * Slow senders against Ferry's real server over loopback, from many source addresses across
 * 127.0.0.0/8 (docs/security.md "Webhook intake"): they hold no budget a signed delivery needs,
 * they are cut off by the header timeout and the minimum body rate, and one address gets only
 * its share of connections. Limits are shortened or lengthened per test; the assertions are on
 * what happens, never on how long it took.
 */
import { createHmac, generateKeyPairSync } from "node:crypto";
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { UnthrottledOctokit } from "../../packages/sandbox/src/ferry-app.js";
import { startFerryServer, type FerryServer } from "../../src/server/ferry-server.js";
import type { IntakeLimits } from "../../src/server/intake-budget.js";
import { openSlowSenders, type SlowSenders } from "./slow-senders.js";

const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});
const SECRET = "slow-senders-secret";
const PING = '{"zen":"Keep it logically awesome.","hook_id":1}';
const HOUR_MS = 3_600_000;

const pingRequest = (id: string): string =>
  `POST /api/github/webhooks HTTP/1.1\r\nHost: ferry\r\nContent-Type: application/json\r\n` +
  `X-GitHub-Event: ping\r\nX-GitHub-Delivery: ${id}\r\n` +
  `X-Hub-Signature-256: sha256=${createHmac("sha256", SECRET).update(PING).digest("hex")}\r\n` +
  `Content-Length: ${Buffer.byteLength(PING)}\r\nConnection: close\r\n\r\n${PING}`;

/** A signed ping over a fresh connection from `localAddress`: the status line's code, or "closed" when none came. */
function signedPing(port: number, localAddress = "127.0.0.1"): Promise<number | "closed"> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress });
    let answer = "";
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString("latin1")));
    socket.on("error", () => {});
    socket.on("close", () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
      resolve(status ? Number(status) : "closed");
    });
    socket.once("connect", () => socket.write(pingRequest(`real-${Math.random().toString(36).slice(2)}`)));
  });
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("slow senders from many source addresses", { timeout: 300_000 }, () => {
  let server: FerryServer | undefined;
  let slow: SlowSenders | undefined;
  afterEach(async () => {
    slow?.close();
    slow = undefined;
    await server?.close();
    server = undefined;
  });

  const start = async (intake: IntakeLimits) =>
    (server = await startFerryServer({
      appId: 1,
      privateKey,
      webhookSecret: SECRET,
      baseUrl: "http://127.0.0.1:9",
      Octokit: UnthrottledOctokit,
      scanIntervalMs: false,
      logLevel: "fatal",
      intake,
    }));

  it("serves signed deliveries while 500 slow connections from 500 addresses are open mid-body", async () => {
    // Limits long enough that no slow sender is cut off during the test: they all stay open.
    const { url, port, intake } = await start({
      headerTimeoutMs: HOUR_MS,
      requestTimeoutMs: HOUR_MS,
      rateGraceMs: HOUR_MS,
    });
    slow = openSlowSenders(url, 500);
    await slow.started;
    // Each slow sender is being read or has been answered.
    await until(
      () => slow!.answered() + intake.inFlight.bodies >= 500,
      "every slow body to be admitted or answered",
    );
    expect(slow.answered()).toBe(0);
    for (let i = 0; i < 3; i++) expect(await signedPing(port)).toBe(200);
    expect(slow.answered()).toBe(0);
    expect(intake.inFlight.bodies).toBeGreaterThanOrEqual(500);
  });

  it("cuts off headers that never finish and bodies below the minimum rate, then holds nothing", async () => {
    const { url, port, intake } = await start({
      headerTimeoutMs: 500,
      rateGraceMs: 500,
      minBytesPerSecond: 1024,
      requestTimeoutMs: HOUR_MS,
    });
    const halfHeaders = openSlowSenders(url, 20, { headersOnly: "half" });
    slow = openSlowSenders(url, 20, { dripMs: 100, declaredBytes: 10_000 });
    await Promise.all([halfHeaders.started, slow.started]);
    await until(
      () => halfHeaders.answered() === 20 && slow!.answered() === 20,
      "every slow sender to be cut off",
    );
    // The bodies were refused for their rate, not for the request's timeout.
    for (const answer of slow.answers())
      expect(answer).toMatch(/^HTTP\/1\.1 408 [^]*\r\n\r\nbody too slow\n$/);
    halfHeaders.close();
    await until(() => intake.inFlight.bodies === 0, "the budget to be empty");
    expect(intake.inFlight).toEqual({ bytes: 0, bodies: 0 });
    expect(await signedPing(port)).toBe(200);
  });

  it("gives one source address only its share of connections, and others theirs", async () => {
    const { port } = await start({
      maxConnectionsPerSource: 4,
      headerTimeoutMs: HOUR_MS,
      requestTimeoutMs: HOUR_MS,
      rateGraceMs: HOUR_MS,
    });
    const sameAddress = "127.200.0.1";
    const held = Array.from({ length: 4 }, () =>
      connect({ host: "127.0.0.1", port, localAddress: sameAddress }),
    );
    try {
      await Promise.all(held.map((socket) => new Promise((resolve) => socket.once("connect", resolve))));
      // The server counts a connection once it has accepted it: a ping from the same address
      // proves the four are counted when it is refused, and a ping from elsewhere is served.
      expect(await signedPing(port, sameAddress)).toBe("closed");
      expect(await signedPing(port, "127.200.0.2")).toBe(200);
      held[0]!.destroy();
      let served: number | "closed" = "closed";
      for (let tries = 0; tries < 50 && served !== 200; tries++) served = await signedPing(port, sameAddress);
      expect(served).toBe(200);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});
