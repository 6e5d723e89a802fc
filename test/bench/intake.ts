/**
 * Webhook intake under attack, against Ferry's real server in this process with its default
 * limits. The concurrent-body attack: 100 concurrent ~24 MB bodies to `POST /api/github/webhooks`
 * from 100 source addresses, unsigned and with a forged well-formed signature: the growth of the
 * process's resident memory (peak during the attack minus before) and how the attackers were
 * answered (0: cut off before the answer could be read). The slow-sender attack: 500 connections
 * from 500 addresses across 127.0.0.0/8, each with plausible headers, a small declared body and
 * one byte every 4 s: a signed delivery's latency while they are open, and how long until the
 * minimum body rate has cut them all off.
 */
import { createHmac, generateKeyPairSync } from "node:crypto";
import { performance } from "node:perf_hooks";
import { UnthrottledOctokit } from "../../packages/sandbox/src/ferry-app.js";
import { startFerryServer } from "../../src/server/ferry-server.js";
import { openSlowSenders, sourceAddress } from "../server/slow-senders.js";
import { postBody } from "../server/webhook-attack.js";

const ATTACKERS = 100;
const SLOW_SENDERS = 500;
const SIGNED_DELIVERIES = 20;
const BODY_BYTES = 24 * 1024 * 1024;
const MB = 1024 * 1024;

export async function bench(): Promise<Record<string, number>> {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const secret = "bench-secret";
  const server = await startFerryServer({
    appId: 1,
    privateKey,
    webhookSecret: secret,
    baseUrl: "http://127.0.0.1:9",
    Octokit: UnthrottledOctokit,
    scanIntervalMs: false,
    logLevel: "fatal",
  });
  const figures: Record<string, number> = {};
  try {
    for (const [name, signature] of [
      ["unsigned", undefined],
      ["forged_signature", `sha256=${"0".repeat(64)}`],
    ] as const) {
      (globalThis as { gc?: () => void }).gc?.();
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 10);
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: ATTACKERS }, (_, i) =>
          postBody(
            server.url,
            {
              "content-type": "application/json",
              "x-github-event": "push",
              "x-github-delivery": `${name}-${i}`,
              ...(signature ? { "x-hub-signature-256": signature } : {}),
            },
            BODY_BYTES,
            undefined,
            undefined,
            sourceAddress(i),
          ),
        ),
      );
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      const key = `intake.${ATTACKERS}_concurrent_24MB_${name}`;
      figures[`${key}.rss_growth_mb`] = (peak - before) / MB;
      figures[`${key}.seconds`] = (performance.now() - started) / 1000;
      for (const status of [0, 401, 413, 415, 503])
        figures[`${key}.answered_${status}`] = answers.filter((a) => a.status === status).length;
    }
    const body = '{"zen":"Keep it logically awesome.","hook_id":1}';
    const signed = (id: string) =>
      fetch(`${server.url}/api/github/webhooks`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-github-event": "ping",
          "x-github-delivery": id,
          "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
        },
        body,
      });
    const after = await signed("after-attack");
    figures["intake.signed_delivery_after_attack.status"] = after.status;

    const slow = openSlowSenders(server.url, SLOW_SENDERS);
    try {
      await slow.started;
      const slowStarted = performance.now();
      const latencies: number[] = [];
      let served = 0;
      for (let i = 0; i < SIGNED_DELIVERIES; i++) {
        const sent = performance.now();
        const answer = await signed(`during-slow-${i}`);
        latencies.push(performance.now() - sent);
        if (answer.status === 200) served++;
      }
      latencies.sort((a, b) => a - b);
      const key = `intake.${SLOW_SENDERS}_slow_senders_${SLOW_SENDERS}_addresses`;
      figures[`${key}.still_open_after_deliveries`] = SLOW_SENDERS - slow.answered();
      figures[`${key}.signed_deliveries_served`] = served;
      figures[`${key}.signed_delivery_p50_ms`] = latencies[Math.floor(latencies.length * 0.5)]!;
      figures[`${key}.signed_delivery_p99_ms`] = latencies[Math.ceil(latencies.length * 0.99) - 1]!;
      const deadline = performance.now() + 120_000;
      while (slow.answered() < SLOW_SENDERS && performance.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      figures[`${key}.cut_off`] = slow.answered();
      figures[`${key}.seconds_until_all_cut_off`] = (performance.now() - slowStarted) / 1000;
    } finally {
      slow.close();
    }
    figures["intake.rss_after_attacks_mb"] = process.memoryUsage().rss / MB;
  } finally {
    await server.close();
  }
  return figures;
}
