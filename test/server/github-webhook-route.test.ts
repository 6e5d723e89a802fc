/**
 * `POST /api/github/webhooks` under attack, through Ferry's real server over loopback HTTP:
 * headers are checked before any body is read, bodies are admitted against the server-wide
 * intake budget, and a signed delivery that does not fit its event is a generic 400.
 */
import { createHmac, generateKeyPairSync } from "node:crypto";
import { Writable } from "node:stream";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { UnthrottledOctokit } from "../../packages/sandbox/src/ferry-app.js";
import { startFerryServer, type FerryServer } from "../../src/server/ferry-server.js";
import type { IntakeLimits } from "../../src/server/intake-budget.js";
import { sourceAddress } from "./slow-senders.js";
import { postBody } from "./webhook-attack.js";

const { privateKey } = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
  publicKeyEncoding: { type: "spki", format: "pem" },
});
const SECRET = "route-test-secret";
const BODY_BYTES = 24 * 1024 * 1024;
const ATTACKERS = 100;

const sign = (body: string | Buffer) => `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;

async function postSigned(url: string, event: string, body: string): Promise<Response> {
  return fetch(`${url}/api/github/webhooks`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": `d-${Math.random().toString(36).slice(2)}`,
      "x-hub-signature-256": sign(body),
    },
    body,
  });
}

const pingBody = '{"zen":"Keep it logically awesome.","hook_id":1}';

describe("POST /api/github/webhooks under attack", () => {
  let server: FerryServer | undefined;
  const logs: string[] = [];
  afterEach(async () => {
    await server?.close();
    server = undefined;
    logs.length = 0;
  });

  const start = async (intake?: IntakeLimits) =>
    (server = await startFerryServer({
      appId: 1,
      privateKey,
      webhookSecret: SECRET,
      baseUrl: "http://127.0.0.1:9",
      Octokit: UnthrottledOctokit,
      scanIntervalMs: false,
      ...(intake ? { intake } : {}),
      log: pino(
        { level: "info" },
        new Writable({
          write(chunk, _encoding, done) {
            logs.push(String(chunk));
            done();
          },
        }),
      ),
    }));

  it("answers 100 concurrent unsigned 24 MB bodies with 401 or 415 before reading them, then accepts a signed delivery", async () => {
    // Refusal on the headers is under test, not the header clock: with 100 uploads at once on a
    // loaded machine a header read waited past the default 10 s and was answered 408 (stress run 6).
    const { url } = await start({ headerTimeoutMs: 240_000 });
    const answers = await Promise.all(
      Array.from({ length: ATTACKERS }, (_, i) =>
        postBody(
          url,
          {
            "content-type": i % 10 === 0 ? "application/x-www-form-urlencoded" : "application/json",
            "x-github-event": "push",
            "x-github-delivery": `attack-${i}`,
          },
          BODY_BYTES,
          undefined,
          undefined,
          sourceAddress(i),
        ),
      ),
    );
    for (const [i, answer] of answers.entries()) {
      expect(answer.status, `attacker ${i}`).toBe(i % 10 === 0 ? 415 : 401);
      // Refused on its headers: the answer came while most of the body was still unsent.
      expect(answer.sentBeforeAnswer, `attacker ${i}`).toBeLessThan(BODY_BYTES / 2);
    }
    expect((await postSigned(url, "ping", pingBody)).status).toBe(200);
  });

  it("holds only the bytes concurrent forged-signature 24 MB bodies from 100 addresses have sent, within the budget, answers the rest 503 with Retry-After, then accepts a signed delivery", async () => {
    const { url, intake } = await start();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let answered = 0;
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, intake.inFlight.bytes)), 1);
    const pending = Array.from({ length: ATTACKERS }, (_, i) =>
      postBody(
        url,
        {
          "content-type": "application/json",
          "x-github-event": "push",
          "x-github-delivery": `forged-${i}`,
          "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
        },
        BODY_BYTES,
        gate,
        () => answered++,
        sourceAddress(i),
      ),
    );
    // Every attacker has sent its headers and first chunk: each is either being read or answered.
    while (answered + intake.inFlight.bodies < ATTACKERS)
      await new Promise((resolve) => setTimeout(resolve, 5));
    // What they declared (2.4 GB) is not held: only what they sent.
    expect(intake.inFlight.bytes).toBeLessThanOrEqual(ATTACKERS * 64 * 1024);
    release();
    const answers = await Promise.all(pending);
    clearInterval(sampler);
    // From a hundred addresses: never more than the budget held at once.
    expect(peak).toBeLessThanOrEqual(intake.maxInFlightBytes);
    // Refused when the budget ran out: answered 503, or cut off before the answer could be read.
    const refused = answers.filter((answer) => answer.status === 503 || answer.status === 0);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused.filter((a) => a.status === 503))
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    // The others were read whole and failed their signature.
    expect(answers.filter((answer) => answer.status === 401)).toHaveLength(ATTACKERS - refused.length);
    expect(intake.inFlight).toEqual({ bytes: 0, bodies: 0 });
    expect((await postSigned(url, "ping", pingBody)).status).toBe(200);
  });

  it("refuses a declared length over GitHub's 25 MB cap with 413 before reading it", async () => {
    const { url } = await start();
    const answer = await postBody(
      url,
      {
        "content-type": "application/json",
        "x-github-event": "push",
        "x-github-delivery": "too-big",
        "x-hub-signature-256": `sha256=${"0".repeat(64)}`,
      },
      25 * 1024 * 1024 + 1,
    );
    expect(answer.status).toBe(413);
    expect(answer.sentBeforeAnswer).toBeLessThan(BODY_BYTES / 2);
  });
});

describe("POST /api/github/webhooks: signed but malformed deliveries", () => {
  let server: FerryServer | undefined;
  const logs: string[] = [];
  afterEach(async () => {
    await server?.close();
    server = undefined;
    logs.length = 0;
  });

  const start = async () =>
    (server = await startFerryServer({
      appId: 1,
      privateKey,
      webhookSecret: SECRET,
      baseUrl: "http://127.0.0.1:9",
      Octokit: UnthrottledOctokit,
      scanIntervalMs: false,
      log: pino(
        { level: "info" },
        new Writable({
          write(chunk, _encoding, done) {
            logs.push(String(chunk));
            done();
          },
        }),
      ),
    }));

  it("answers a signed body that is not JSON with a generic 400", async () => {
    const { url } = await start();
    const response = await postSigned(url, "push", "{not json");
    expect(response.status).toBe(400);
    expect(await response.text()).toBe("malformed delivery\n");
  });

  it("answers a signed delivery that does not fit its event with a generic 400 and logs the stack only", async () => {
    const { url } = await start();
    // An issue_comment without comment, issue or repository: the handler cannot read it.
    const response = await postSigned(url, "issue_comment", '{"action":"created"}');
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).toBe("malformed delivery\n");
    expect(text).not.toMatch(/TypeError|Cannot read|undefined/);
    expect(logs.join("")).toMatch(/TypeError[^"]*\\n\s+at /);
  });
});
