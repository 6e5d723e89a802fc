/**
 * App figures: GitHub API requests per promotion, time from a registry
 * push to the PR, coalescing of a webhook burst, and the server's peak memory under it. Runs the
 * real server against the GitHub emulator and the embedded registry on 127.0.0.1.
 */
import { Agent, request } from "node:http";
import { performance } from "node:perf_hooks";
import { REGISTRY_SECRET, startWorld, type World } from "../support/app-e2e-world.js";
import { sized } from "./size.js";

const PUSHES = sized(50, 3);
const BURST = sized(1000, 50);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The Ferry PR for prod is closed and its branch deleted (as a person would), so the next /promote opens a new one. */
async function discardProdPull(world: World): Promise<void> {
  for (const pull of await world.pulls("open")) {
    if (pull.head.ref !== "ferry/prod") continue;
    await world.as.mona.rest.pulls.update({
      owner: "acme",
      repo: "config",
      pull_number: pull.number,
      state: "closed",
    });
    await world.as.mona.rest.git.deleteRef({ owner: "acme", repo: "config", ref: "heads/ferry/prod" });
  }
  await world.settle();
}

/**
 * GitHub requests per promotion (docs/architecture.md "Request budget": at most 8 for a new PR), counted from the delivery of the
 * `/promote prod` comment to the prod PR being open (created and labelled: `onPullRequest`). The
 * promotion is measured with only `issue_comment` delivered, so the CI and pull_request events the
 * new PR sets off are not mixed in; those follow-on requests are measured apart, from a second
 * promotion with every event delivered. "warm" is a running server (it has seen the base's tree and
 * files, e.g. on the push that merged staging); "cold" is a process that has seen nothing.
 */
async function requestCounts(): Promise<Record<string, number>> {
  let openedAt: number | undefined;
  let requestsSoFar = (): number => 0;
  const world = await startWorld({
    ci: true,
    server: {
      ferry: {
        onPullRequest: (event) =>
          void (event.environment === "prod" && event.action === "opened" && (openedAt = requestsSoFar())),
      },
    },
  });
  requestsSoFar = () => world.emu.requests().length;
  try {
    const mark = world.emu.requests().length;
    await world.push("1.8.0");
    const bump = world.appRequests(mark).length;
    const issue = await world.openIssue();
    await world.settle();

    const promote = async (): Promise<{ toOpen: number; command: number }> => {
      openedAt = undefined;
      const start = world.emu.requests().length;
      await world.as.mona.rest.issues.createComment({
        owner: "acme",
        repo: "config",
        issue_number: issue,
        body: "/promote prod",
      });
      await world.settle();
      if (openedAt === undefined) throw new Error("bench: /promote prod opened no PR");
      return {
        toOpen: world.appRequests(start).length - world.appRequests(openedAt).length,
        command: world.appRequests(start).length,
      };
    };

    world.onlyEvents(["issue_comment"]);
    const warm = await promote();
    world.onlyEvents(undefined);
    await discardProdPull(world);
    const withFollowOn = await promote();
    await discardProdPull(world);
    world.onlyEvents(["issue_comment"]);
    world.server.ferry.contentCache.clear();
    const cold = await promote();
    return {
      "app.github_requests_per_bump_pr_including_merge": bump,
      "app.github_requests_per_promotion_new_pr": warm.toOpen,
      "app.github_requests_per_promotion_command_total": warm.command,
      "app.github_requests_per_promotion_new_pr_cold_cache": cold.toOpen,
      "app.github_requests_after_promotion_follow_on_events": withFollowOn.command - warm.command,
    };
  } finally {
    await world.close();
  }
}

/** Registry push → PR opened or updated, over 50 pushes (coalescing window 20 ms; production default 1 s). */
async function pushToPr(): Promise<Record<string, number>> {
  const pending = new Map<string, number>();
  const latencies: number[] = [];
  let waiting: (() => void) | undefined;
  let pushedAt = 0;
  const world = await startWorld({
    ci: false,
    server: {
      ferry: {
        onPullRequest: () => {
          latencies.push(performance.now() - pushedAt);
          waiting?.();
        },
      },
    },
  });
  try {
    for (let i = 0; i < PUSHES; i++) {
      const seen = new Promise<void>((resolve) => (waiting = resolve));
      pushedAt = performance.now();
      await (
        await import("../../packages/sandbox/src/registry/push-image.js")
      ).pushImage(world.registry.url, "acme/shop", `1.8.${i}`, { content: `1.8.${i}` });
      await Promise.race([seen, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      await world.server.idle();
    }
    pending.clear();
    return {
      "app.push_to_pr_ms_p50": percentile(latencies, 50),
      "app.push_to_pr_ms_p95": percentile(latencies, 95),
      "app.push_to_pr_samples": latencies.length,
    };
  } finally {
    await world.close();
  }
}

/** 1,000 distribution notifications in a burst → how many syncs and PR writes, and peak RSS. */
async function burst(): Promise<Record<string, number>> {
  let prWrites = 0;
  const world = await startWorld({
    ci: false,
    server: { registryCoalesceMs: 200, ferry: { onPullRequest: () => void prWrites++ } },
  });
  try {
    const { pushImage } = await import("../../packages/sandbox/src/registry/push-image.js");
    await pushImage(world.registry.url, "acme/shop", "1.9.0", { content: "1.9.0" });
    await world.settle();
    prWrites = 0;
    const before = world.server.ferry.queue.completed;
    // The server shares this process with the emulator, the registry and earlier benches: the
    // growth during the burst is the server's own figure; the peak is the whole process's.
    (globalThis as { gc?: () => void }).gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const envelope = (i: number) =>
      JSON.stringify({
        events: [
          {
            id: `e${i}`,
            action: "push",
            target: {
              mediaType: "application/vnd.oci.image.manifest.v1+json",
              repository: "acme/shop",
              tag: "1.9.0",
              url: `${world.registry.url}/v2/acme/shop/manifests/1.9.0`,
            },
            request: { host: world.registry.host },
          },
        ],
      });
    // At most 16 connections at once, kept alive: one source address holds at most 32 connections
    // of the intake (docs/security.md "Webhook intake"), and the intake resets any beyond them. With
    // fetch (no cap on its pool) 25 at a time still went over: a new batch opened connections
    // before the server had seen the last one's close, and the bench stopped on ECONNRESET.
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const post = (body: string) =>
      new Promise<void>((resolve, reject) => {
        const sent = request(
          `${world.server.url}/registry/distribution`,
          {
            method: "POST",
            agent,
            headers: {
              authorization: REGISTRY_SECRET,
              "content-type": "application/vnd.docker.distribution.events.v1+json",
              "content-length": Buffer.byteLength(body),
            },
          },
          (response) => {
            response.resume();
            response.once("error", reject);
            response.once("end", () =>
              (response.statusCode ?? 0) >= 200 && (response.statusCode ?? 0) < 300
                ? resolve()
                : reject(new Error(`POST /registry/distribution: HTTP ${response.statusCode}`)),
            );
          },
        );
        sent.once("error", reject);
        sent.end(body);
      });
    const started = performance.now();
    try {
      await Promise.all(Array.from({ length: BURST }, (_, i) => post(envelope(i))));
    } finally {
      agent.destroy();
    }
    await new Promise((resolve) => setTimeout(resolve, 400));
    await world.settle();
    clearInterval(sampler);
    return {
      [`app.burst_${BURST}_notifications_ms`]: performance.now() - started,
      [`app.burst_${BURST}_notifications_sync_tasks`]: world.server.ferry.queue.completed - before,
      [`app.burst_${BURST}_notifications_pr_writes`]: prWrites,
      "app.burst_peak_rss_mb": Math.round(peak / 1024 / 1024),
      "app.burst_rss_growth_mb": Math.round((peak - baseline) / 1024 / 1024),
    };
  } finally {
    await world.close();
  }
}

/** Runs one part of the group, naming it in its error (a fetch's error names no URL; its cause follows). */
async function part(
  name: string,
  run: () => Promise<Record<string, number>>,
): Promise<Record<string, number>> {
  try {
    return await run();
  } catch (error) {
    throw new Error(name, { cause: error });
  }
}

export async function bench(): Promise<Record<string, number>> {
  return {
    ...(await part("request counts", requestCounts)),
    ...(await part("push to PR", pushToPr)),
    ...(await part("notification burst", burst)),
  };
}
