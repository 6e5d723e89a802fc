/**
 * Webhook intake under the concurrent-body attack: 100 concurrent ~24 MB bodies to
 * `POST /api/github/webhooks`, unsigned and with a forged well-formed signature, against Ferry's
 * real server in this process. Reports the growth of the process's resident memory (peak during
 * the attack minus before) and how the attackers were answered.
 */
import { createHmac, generateKeyPairSync } from "node:crypto";
import { performance } from "node:perf_hooks";
import { UnthrottledOctokit } from "../../packages/sandbox/src/ferry-app.js";
import { startFerryServer } from "../../src/server/ferry-server.js";
import { postBody } from "../server/webhook-attack.js";

const ATTACKERS = 100;
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
          ),
        ),
      );
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      const key = `intake.${ATTACKERS}_concurrent_24MB_${name}`;
      figures[`${key}.rss_growth_mb`] = (peak - before) / MB;
      figures[`${key}.seconds`] = (performance.now() - started) / 1000;
      for (const status of [401, 413, 415, 503])
        figures[`${key}.answered_${status}`] = answers.filter((a) => a.status === status).length;
    }
    const body = '{"zen":"Keep it logically awesome.","hook_id":1}';
    const after = await fetch(`${server.url}/api/github/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "ping",
        "x-github-delivery": "after-attack",
        "x-hub-signature-256": `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`,
      },
      body,
    });
    figures["intake.signed_delivery_after_attack.status"] = after.status;
    figures["intake.rss_after_attacks_mb"] = process.memoryUsage().rss / MB;
  } finally {
    await server.close();
  }
  return figures;
}
