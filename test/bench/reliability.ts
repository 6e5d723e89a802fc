/**
 * `npm run bench` area "reliability": the heavier runs of the reliability suite, with
 * the same drivers as `test/reliability/`: a larger webhook fuzz with ack latency (G1), 100
 * concurrent oversized requests with RSS growth (G4), and the canary count over both (G10).
 * The summary table goes to stderr so `--json` output stays one JSON object.
 */
import { performance } from "node:perf_hooks";
import fc from "fast-check";
import { CanaryWatch } from "../support/canary.js";
import { startStubbedFerry } from "../support/ferry-stub-server.js";
import { keepAliveAgent, send } from "../support/raw-http.js";
import { githubAttacks, registryAttacks } from "../support/webhook-attacks.js";
import { formatSummary, type Figures } from "../support/reliability-ledger.js";
import { sized } from "./size.js";

const FUZZ_REQUESTS = sized(30_000, 1_000);
const OVERSIZED_CONCURRENT = sized(100, 10);

export async function bench(): Promise<Record<string, number>> {
  const canary = new CanaryWatch();
  const ferry = await startStubbedFerry(canary);
  const totals = new Map<string, Figures>();
  try {
    const baselineCalls = ferry.githubCalls.filter((call) => call !== "GET /app").length;
    const attacks = [
      ...fc.sample(registryAttacks(ferry.secrets), { seed: 4242, numRuns: Math.round(FUZZ_REQUESTS * 0.8) }),
      ...fc.sample(githubAttacks(ferry.secrets.github), {
        seed: 4243,
        numRuns: Math.round(FUZZ_REQUESTS * 0.2),
      }),
    ];
    const agent = keepAliveAgent();
    const latencies: number[] = [];
    let non4xx = 0;
    for (const attack of attacks) {
      const started = performance.now();
      const response = await send(
        ferry.ferry.url,
        { path: attack.path, headers: attack.headers, body: attack.body },
        agent,
      );
      latencies.push(performance.now() - started);
      if (response.status < 400 || response.status >= 500) non4xx++;
      canary.scan("response", response.body);
    }
    agent.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await ferry.ferry.idle();
    const sideEffects =
      ferry.githubCalls.filter((call) => call !== "GET /app").length - baselineCalls + (await ferry.hints());
    latencies.sort((a, b) => a - b);
    totals.set("webhooks: fuzzed requests", {
      tried: attacks.length,
      sideEffects: sideEffects + non4xx,
      eventsLost: 0,
      deletions: 0,
      canaryHits: 0,
    });

    // G4: 100 concurrent bodies over the cap (3 MiB registry cap, 25 MB GitHub cap).
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let peakRss = rssBefore;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 5);
    const oversized = Buffer.alloc(3 * 1024 * 1024 + 1, 0x20);
    const statuses = await Promise.all(
      Array.from({ length: OVERSIZED_CONCURRENT }, (_, i) =>
        send(ferry.ferry.url, {
          path: i % 2 === 0 ? "/registry/distribution" : "/registry/generic",
          headers:
            i % 2 === 0
              ? [
                  ["Content-Type", "application/json"],
                  ["Authorization", ferry.secrets.distribution],
                ]
              : [
                  ["Content-Type", "application/json"],
                  ["X-Ferry-Signature-256", `sha256=${"0".repeat(64)}`],
                ],
          body: oversized,
        }).then(
          (response) => response.status,
          () => 0,
        ),
      ),
    );
    clearInterval(sampler);
    const refused = statuses.filter((status) => status === 413 || status === 0).length;
    totals.set("webhooks: oversized concurrent", {
      tried: OVERSIZED_CONCURRENT,
      sideEffects: OVERSIZED_CONCURRENT - refused,
      eventsLost: 0,
      deletions: 0,
      canaryHits: 0,
    });
    for (const line of ferry.logs) canary.scan("log", line);
    totals.set("secrets: canary scan", {
      tried: canary.scanned,
      sideEffects: 0,
      eventsLost: 0,
      deletions: 0,
      canaryHits: canary.hits.length,
    });
    process.stderr.write(`${formatSummary(totals, "RELIABILITY SUMMARY (bench)")}\n`);
    const percentile = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))] ?? 0;
    return {
      reliability_webhook_requests_tried: attacks.length,
      reliability_webhook_side_effects: sideEffects,
      reliability_webhook_non_4xx_answers: non4xx,
      reliability_webhook_refusal_p50_ms: percentile(50),
      reliability_webhook_refusal_p99_ms: percentile(99),
      reliability_oversized_concurrent_requests: OVERSIZED_CONCURRENT,
      reliability_oversized_refused: refused,
      reliability_oversized_rss_growth_mb: (peakRss - rssBefore) / (1024 * 1024),
      reliability_events_lost: 0,
      reliability_canary_hits: canary.hits.length,
    };
  } finally {
    await ferry.close();
  }
}
