/**
 * Load held over time (docs/capacity.md "Soak"): `ferry serve` in its own process against the
 * GitHub emulator and a real CNCF distribution that notifies it of every push, fed a steady mix at
 * a fixed rate: signed GitHub deliveries (the emulator's own `push` and `issue_comment` deliveries
 * replayed under new ids), distribution notifications of the tag already promoted, and `GET
 * /status` reads; one promotion (push → staging PR merged, prod PR updated) per window. Per window:
 * acknowledgement latency p50/p99 of each kind, the process's RSS and open file descriptors, PRs
 * and GitHub writes. Then the reconciler's long-running loop over 1,000 objects for the same time
 * (`ferry reconcile` in its own process against the cluster simulator): the same process figures
 * (RSS, its JS heap from its /metrics, descriptors) and API requests per cycle. "Growth after
 * warm-up" is the largest figure after the first window past the warm-up (the run's first quarter)
 * over that window's, in percent; growth over the very first window is printed beside it.
 */
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Octokit } from "@octokit/rest";
import { startClusterSimulator } from "../../packages/sandbox/src/cluster/cluster-simulator.js";
import {
  accounts,
  startGitHubEmulator,
  type GitHubEmulator,
} from "../../packages/sandbox/src/github/index.js";
import { pushImage } from "../../packages/sandbox/src/registry/push-image.js";
import { createAcmeConfig, REGISTRY_SECRET, SECRET } from "../support/app-e2e-world.js";
import { distributionMissingMessage, freePort, startDistribution } from "../support/registry-distribution.js";
import { benchConfigRepo, OBJECTS } from "./reconcile.js";
import { serveCommand } from "./serve-command.js";
import { processMemory, startServe, stopChild } from "./serve-process.js";
import { sized } from "./size.js";
import { BenchSkipped } from "./skipped.js";

/** `FERRY_SOAK_MINUTES` sets the length of each half (serve, then the reconciler); 20 by default. */
const MINUTES = Number(process.env.FERRY_SOAK_MINUTES ?? sized(20, 0.34));
/** `FERRY_SOAK_ONLY=serve` or `=reconcile` runs that half alone. */
const ONLY = process.env.FERRY_SOAK_ONLY;
const WINDOW_MS = sized(60_000, 10_000);
const WINDOWS = Math.max(2, Math.round((MINUTES * 60_000) / WINDOW_MS));
/** Ten sends a second: five GitHub deliveries, three registry notifications, two status reads. */
const TICK_MS = 100;
const MIX = [
  "github",
  "registry",
  "github",
  "status",
  "github",
  "registry",
  "github",
  "status",
  "github",
  "registry",
] as const;
type Kind = (typeof MIX)[number];
/** More sends than this unanswered at once means the server fell behind: the bench stops and says so. */
const MAX_IN_FLIGHT = 500;
const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const MB = 1024 * 1024;
const T0 = performance.now();
const phase = (name: string) =>
  process.env.SOAK_DEBUG && console.error(`${((performance.now() - T0) / 1000).toFixed(1)} s ${name}`);

export const targets: Record<string, string> = {
  "soak.serve.rss_growth_after_warmup_pct": "≤ 10",
  "soak.serve.heap_floor_growth_after_warmup_pct": "≤ 10",
  "soak.serve.rss_trend_pct": "≤ 10",
  "soak.serve.heap_floor_trend_pct": "≤ 10",
  "soak.serve.fds_floor_growth_after_warmup_pct": "≤ 10",
  "soak.reconcile.rss_floor_growth_after_warmup_pct": "≤ 10",
  "soak.reconcile.rss_floor_trend_pct": "≤ 10",
  "soak.reconcile.heap_floor_growth_after_warmup_pct": "≤ 10",
  "soak.reconcile.heap_floor_trend_pct": "≤ 10",
  "soak.reconcile.fds_floor_growth_after_warmup_pct": "≤ 10",
};

/** What one window saw of a Ferry process (either half's): its memory and descriptors. */
interface ProcessWindow {
  /** The most RSS seen in the window (1 s samples for serve, 250 ms for the reconciler). */
  rss: number;
  /**
   * The least RSS seen in the window: what the process keeps between bursts. The reconciler renders
   * and parses its 1,000 objects every cycle, so its most seen is that cycle's peak (115–150 MB from
   * window to window, with no trend, whatever the semi-space size); a leak raises the least.
   */
  rssFloor: number;
  /** The lowest JS heap in use seen in the window (Ferry's own /metrics): what survives collection. */
  heapFloor: number;
  /**
   * The most V8 held for the JS heap and the most Node held outside it (buffers, native objects)
   * in the window (/metrics): beside RSS, they say whether a climb is the heap's, its buffers' or
   * below both (the allocator, code, native libraries).
   */
  heapTotal: number;
  external: number;
  /** The most open file descriptors seen in the window (1 s samples), in-flight sockets included. */
  fds: number;
  /**
   * The fewest seen in the window: what stays open between requests. At ten sends a second a
   * sample catches a few sockets in flight, so the most seen moves by 3 or 4 over a floor of about
   * 27 (more than 10 %) with nothing held; a leaked handle raises the floor.
   */
  fdsFloor: number;
}

interface Window extends ProcessWindow {
  /** Whether the fixed-rate mix ran during the window (the quiet window: only its promotion). */
  load: boolean;
  latencies: Record<Kind, number[]>;
  failed: number;
  pulls: number;
  writes: number;
}

function emptyProcessWindow(): ProcessWindow {
  return {
    rss: 0,
    rssFloor: Number.POSITIVE_INFINITY,
    heapFloor: 0,
    heapTotal: 0,
    external: 0,
    fds: 0,
    fdsFloor: Number.POSITIVE_INFINITY,
  };
}

/** Takes the process's RSS and open descriptors (from /proc) into the window. */
function takeProcess(window: ProcessWindow, pid: number): number {
  const rss = processMemory(pid).rssMb;
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  window.rss = Math.max(window.rss, rss);
  window.rssFloor = Math.min(window.rssFloor, rss);
  window.fds = Math.max(window.fds, fds);
  window.fdsFloor = Math.min(window.fdsFloor, fds);
  return rss;
}

/** Takes the JS heap's figures from one `/metrics` answer of the process into the window. */
function takeHeap(window: ProcessWindow, metrics: string): void {
  const used = sampleMb(metrics, "nodejs_heap_size_used_bytes");
  if (used !== undefined) window.heapFloor = window.heapFloor === 0 ? used : Math.min(window.heapFloor, used);
  window.heapTotal = Math.max(window.heapTotal, sampleMb(metrics, "nodejs_heap_size_total_bytes") ?? 0);
  window.external = Math.max(window.external, sampleMb(metrics, "nodejs_external_memory_bytes") ?? 0);
}

/** The per-window series of a process's figures, under their bench names. */
function processSeries(windows: ProcessWindow[]): Record<string, number[]> {
  return {
    rss: windows.map((w) => w.rss),
    rss_floor: windows.map((w) => w.rssFloor),
    heap_floor: windows.map((w) => w.heapFloor),
    fds_floor: windows.map((w) => w.fdsFloor),
    fds: windows.map((w) => w.fds),
    heap_total: windows.map((w) => w.heapTotal),
    external: windows.map((w) => w.external),
  };
}

/** Each window's process figures under `key` (e.g. `soak.serve.window_01`). */
function processWindowFigures(key: string, w: ProcessWindow): Record<string, number> {
  return {
    [`${key}.rss_mb`]: w.rss,
    [`${key}.rss_floor_mb`]: w.rssFloor,
    [`${key}.heap_floor_mb`]: w.heapFloor,
    [`${key}.heap_total_mb`]: w.heapTotal,
    [`${key}.external_mb`]: w.external,
    [`${key}.open_fds`]: w.fds,
    [`${key}.open_fds_floor`]: w.fdsFloor,
  };
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Windows of warm-up before the baseline: the first quarter of the run (5 of a full run's 20; none
 * in a quick run of two). A fresh process fills its heap's floor, code space and caches over its
 * first minutes (the fifth soak's JS heap floor: 24.6 MB in minute 1, 27–28.5 MB from minute 4
 * on), so a first window taken then measures the filling, not a leak.
 */
function warmupWindows(count: number): number {
  return Math.floor(count / 4);
}

/** The largest of `values` after the first, over the first, in percent (0 when it never grew). */
function growthPct(values: number[]): number {
  const [warm, ...rest] = values;
  if (!warm || rest.length === 0) return 0;
  return Math.max(0, ((Math.max(...rest) - warm) / warm) * 100);
}

/**
 * One per-window figure's growth: after warm-up (the first window after it is the baseline, the
 * issue's "no growth beyond 10% after warm-up"), and over the very first window, printed beside it
 * so the warm-up's own share shows.
 */
function growthFigures(prefix: string, values: number[]): Record<string, number> {
  return {
    [`${prefix}_growth_after_warmup_pct`]: growthPct(values.slice(warmupWindows(values.length))),
    [`${prefix}_growth_over_first_window_pct`]: growthPct(values),
  };
}

/**
 * The median of the later half of `values` over the median of the earlier half, in percent: a
 * leak moves the whole later half up, while one window caught before a collection moves only
 * `growthPct`'s maximum.
 */
function trendPct(values: number[]): number {
  if (values.length < 2) return 0;
  const median = (list: number[]) => {
    const sorted = [...list].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  const half = Math.floor(values.length / 2);
  const earlier = median(values.slice(0, half));
  if (!earlier) return 0;
  return ((median(values.slice(values.length - half)) - earlier) / earlier) * 100;
}

const SERVE = serveCommand();

/** What a stuck promotion looks like from GitHub's side (SOAK_DEBUG only): the open PRs, their checks, the deliveries that were not pushes or comments. */
async function stuckReport(mona: Octokit, emu: GitHubEmulator, appId: number): Promise<string> {
  const lines: string[] = [];
  const open = await mona.rest.pulls.list({ owner: "acme", repo: "config", state: "open" });
  for (const listed of open.data) {
    const { data: pull } = await mona.rest.pulls.get({
      owner: "acme",
      repo: "config",
      pull_number: listed.number,
    });
    const checks = await mona.rest.checks.listForRef({ owner: "acme", repo: "config", ref: pull.head.sha });
    const statuses = await mona.rest.repos.getCombinedStatusForRef({
      owner: "acme",
      repo: "config",
      ref: pull.head.sha,
    });
    lines.push(
      `#${pull.number} ${pull.head.ref}@${pull.head.sha.slice(0, 7)} mergeable=${pull.mergeable} state=${pull.mergeable_state} auto_merge=${JSON.stringify(pull.auto_merge)}`,
      `  checks: ${checks.data.check_runs.map((run) => `${run.name}:${run.status}/${run.conclusion}@${run.app?.slug}`).join(", ")}`,
      `  statuses: ${statuses.data.state} ${statuses.data.statuses.map((s) => `${s.context}:${s.state}`).join(", ")}`,
    );
  }
  const deliveries = emu.webhooks
    .deliveries()
    .filter((d) => d.appId === appId && d.event !== "push" && d.event !== "issue_comment");
  for (const d of deliveries.slice(-30))
    lines.push(`  delivery ${d.event}.${d.action ?? ""} -> ${d.status} ${d.error ?? ""}`);
  return lines.join("\n");
}

async function serveSoak(): Promise<Record<string, number>> {
  const missing = distributionMissingMessage();
  if (missing) throw new BenchSkipped(missing);
  const emu = await startGitHubEmulator();
  const port = await freePort();
  const distribution = await startDistribution("none", {
    notifications: [
      { url: `http://127.0.0.1:${port}/registry/distribution`, headers: { Authorization: REGISTRY_SECRET } },
    ],
  });
  let serve: Awaited<ReturnType<typeof startServe>> | undefined;
  try {
    await pushImage(distribution.url, "acme/shop", "1.7.0", { content: "1.7.0" });
    const { app, users } = await createAcmeConfig(emu, distribution.host, { ci: true });
    const statusToken = randomBytes(16).toString("hex");
    phase("world");
    serve = await startServe(emu, app, {
      port,
      env: {
        FERRY_SCAN_INTERVAL: "off",
        FERRY_STATUS_TOKEN: statusToken,
        LOG_LEVEL: process.env.SOAK_DEBUG ? "info" : "warn",
        // e.g. --heapsnapshot-signal=SIGUSR2 to compare heaps across windows (docs/capacity.md "Soak").
        ...(process.env.SOAK_NODE_OPTIONS ? { NODE_OPTIONS: process.env.SOAK_NODE_OPTIONS } : {}),
      },
      ...(process.env.SOAK_DEBUG
        ? { onOutput: (chunk: Buffer) => appendFileSync("/tmp/soak-serve.log", chunk) }
        : {}),
    });
    phase("serve started");
    accounts.setWebhook(emu, app.id, `${serve.url}/api/github/webhooks`, SECRET);
    const mona = new Octokit({ baseUrl: emu.apiUrl, auth: users.mona.token, request: { retries: 0 } });
    const pid = serve.child.pid!;

    const appWrites = (from: number) =>
      emu
        .requests()
        .slice(from)
        .filter((r) => (r.actor === app.botLogin || r.actor.startsWith("app:")) && WRITES.has(r.method))
        .length;
    const pullCount = async () =>
      (await mona.rest.pulls.list({ owner: "acme", repo: "config", state: "all", per_page: 100 })).data
        .length;
    let version = 0;
    /** Pushes the next tag and waits until its staging PR merged (the real distribution notifies Ferry). */
    const promote = async (): Promise<string> => {
      const tag = `1.8.${version++}`;
      await pushImage(distribution.url, "acme/shop", tag, { content: tag });
      const deadline = performance.now() + 300_000;
      for (;;) {
        const { data } = await mona.rest.pulls.list({
          owner: "acme",
          repo: "config",
          state: "closed",
          per_page: 100,
        });
        if (
          data.some((pull) => pull.merged_at && pull.head.ref === "ferry/staging" && pull.title.includes(tag))
        )
          return tag;
        if (performance.now() > deadline) {
          if (process.env.SOAK_DEBUG) console.error(serve!.output(), await stuckReport(mona, emu, app.id));
          throw new Error(
            `soak: the staging PR for ${tag} did not merge in 300 s:\n${serve!.output().slice(-6000)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };
    const quietly = async () => {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await emu.idle();
    };

    // The first promotion opens the prod PR; each later one is the steady cost measured below.
    let current = await promote();
    await quietly();

    // What the soak replays: the emulator's own deliveries of a push to main and of a comment that is no command.
    const issue = (await mona.rest.issues.create({ owner: "acme", repo: "config", title: "Release notes" }))
      .data.number;
    await mona.rest.issues.createComment({
      owner: "acme",
      repo: "config",
      issue_number: issue,
      body: "Looks good.",
    });
    await emu.idle();
    const recorded = emu.webhooks.deliveries();
    const samples = ["push", "issue_comment"].map((event) => {
      const delivery = [...recorded]
        .reverse()
        .find(
          (d) =>
            d.event === event &&
            d.appId === app.id &&
            (event !== "push" || d.payload.ref === "refs/heads/main"),
        );
      if (!delivery) throw new Error(`soak: the emulator made no ${event} delivery to replay`);
      return { event, body: JSON.stringify(delivery.payload) };
    });
    const envelope = (tag: string) =>
      JSON.stringify({
        events: [
          {
            id: randomUUID(),
            action: "push",
            target: {
              mediaType: "application/vnd.oci.image.manifest.v1+json",
              repository: "acme/shop",
              tag,
              url: `${distribution.url}/v2/acme/shop/manifests/${tag}`,
            },
            request: { host: distribution.host },
          },
        ],
      });
    let sent = 0;
    const send = (kind: Kind): Promise<Response> => {
      if (kind === "status")
        return fetch(`${serve!.url}/status`, { headers: { authorization: `Bearer ${statusToken}` } });
      if (kind === "registry")
        return fetch(`${serve!.url}/registry/distribution`, {
          method: "POST",
          headers: {
            authorization: REGISTRY_SECRET,
            "content-type": "application/vnd.docker.distribution.events.v1+json",
          },
          body: envelope(current),
        });
      const sample = samples[sent++ % samples.length]!;
      return fetch(`${serve!.url}/api/github/webhooks`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "GitHub-Hookshot/ferry-bench",
          "x-github-event": sample.event,
          "x-github-delivery": randomUUID(),
          "x-github-hook-installation-target-id": String(app.id),
          "x-github-hook-installation-target-type": "integration",
          "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(sample.body).digest("hex")}`,
        },
        body: sample.body,
      });
    };

    const windows: Window[] = [];
    let inFlight = 0;
    let window: Window | undefined;
    let tick = 0;
    let overload: string | undefined;
    const ticker = setInterval(() => {
      const open = window;
      if (!open?.load) return;
      const kind = MIX[tick++ % MIX.length]!;
      if (inFlight >= MAX_IN_FLIGHT) {
        overload ??= `${inFlight} sends unanswered: the server fell behind the fixed rate`;
        return;
      }
      inFlight++;
      const started = performance.now();
      void send(kind)
        .then(async (response) => {
          await response.arrayBuffer();
          if (response.ok) open.latencies[kind].push(performance.now() - started);
          else open.failed++;
        })
        .catch(() => open.failed++)
        .finally(() => inFlight--);
    }, TICK_MS);
    let peakRss = 0;
    const sampler = setInterval(() => {
      if (!window) return;
      peakRss = Math.max(peakRss, takeProcess(window, pid));
    }, 1000);
    // The JS heap beside RSS: a leak in Ferry's objects grows the heap's floor, while RSS also holds
    // what V8 and the allocator keep reserved. Read every 2 s from the public /metrics.
    const heapSampler = setInterval(() => {
      const open = window;
      if (!open) return;
      void fetch(`${serve!.url}/metrics`)
        .then((response) => response.text())
        .then((text) => takeHeap(open, text))
        .catch(() => undefined);
    }, 2000);
    /** One window: a promotion, then the rest of the window; the mix runs throughout when `load`. */
    const runWindow = async (load: boolean): Promise<Window> => {
      const opened: Window = {
        load,
        latencies: { github: [], registry: [], status: [] },
        failed: 0,
        ...emptyProcessWindow(),
        pulls: 0,
        writes: 0,
      };
      window = opened;
      const started = performance.now();
      const mark = emu.requests().length;
      const pullsBefore = await pullCount();
      current = await promote();
      const rest = WINDOW_MS - (performance.now() - started);
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
      opened.writes = appWrites(mark);
      opened.pulls = (await pullCount()) - pullsBefore;
      if (overload) throw new Error(`soak: ${overload}`);
      if (serve!.child.exitCode !== null) throw new Error(`soak: ferry serve exited:\n${serve!.output()}`);
      return opened;
    };
    let quiet: Window;
    try {
      quiet = await runWindow(false);
      phase("quiet window");
      for (let index = 0; index < WINDOWS; index++) windows.push(await runWindow(true));
    } finally {
      clearInterval(ticker);
      clearInterval(sampler);
      clearInterval(heapSampler);
      window = undefined;
    }

    const figures: Record<string, number> = {
      "soak.serve.minutes": (WINDOWS * WINDOW_MS) / 60_000,
      "soak.serve.sends_per_second": 1000 / TICK_MS,
      "soak.serve.from_dist": SERVE.fromDist ? 1 : 0,
      "soak.serve.quiet_promotion_pulls": quiet.pulls,
      "soak.serve.quiet_promotion_github_writes": quiet.writes,
      "soak.serve.quiet_rss_mb": quiet.rss,
    };
    windows.forEach((w, index) => {
      const key = `soak.serve.window_${String(index + 1).padStart(2, "0")}`;
      for (const kind of ["github", "registry", "status"] as const) {
        figures[`${key}.${kind}_ack_p50_ms`] = percentile(w.latencies[kind], 50);
        figures[`${key}.${kind}_ack_p99_ms`] = percentile(w.latencies[kind], 99);
      }
      figures[`${key}.refused_or_failed`] = w.failed;
      Object.assign(figures, processWindowFigures(key, w));
      figures[`${key}.promotion_pulls`] = w.pulls;
      figures[`${key}.promotion_github_writes`] = w.writes;
    });
    const all = (kind: Kind) => windows.flatMap((w) => w.latencies[kind]);
    for (const kind of ["github", "registry", "status"] as const) {
      figures[`soak.serve.${kind}_ack_p50_ms`] = percentile(all(kind), 50);
      figures[`soak.serve.${kind}_ack_p99_ms`] = percentile(all(kind), 99);
      figures[`soak.serve.${kind}_acknowledged`] = all(kind).length;
    }
    figures["soak.serve.refused_or_failed"] = windows.reduce((sum, w) => sum + w.failed, 0);
    figures["soak.serve.peak_rss_mb"] = peakRss;
    Object.assign(figures, seriesFigures("soak.serve", processSeries(windows)));
    figures["soak.serve.promotion_github_writes_max"] = Math.max(...windows.map((w) => w.writes));
    figures["soak.serve.promotion_github_writes_min"] = Math.min(...windows.map((w) => w.writes));
    figures["soak.serve.promotion_pulls_max"] = Math.max(...windows.map((w) => w.pulls));
    figures["soak.serve.promotion_pulls_min"] = Math.min(...windows.map((w) => w.pulls));
    return figures;
  } finally {
    if (serve) await stopChild(serve.child);
    await distribution.close();
    await emu.close();
  }
}

/** A metric's samples in a Prometheus text answer: each one's labels (`` for none) and value. */
function samples(metrics: string, name: string): { labels: string; value: number }[] {
  const found: { labels: string; value: number }[] = [];
  for (const line of metrics.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = line.startsWith(`${name}{`) ? line.slice(name.length + 1, line.lastIndexOf("}")) : "";
    found.push({ labels, value: Number(line.slice(line.lastIndexOf(" ") + 1)) });
  }
  return found;
}

/** An unlabelled sample's value, in MB; undefined when absent. */
function sampleMb(metrics: string, name: string): number | undefined {
  const value = samples(metrics, name).find((sample) => sample.labels === "")?.value;
  return value !== undefined && Number.isFinite(value) ? value / MB : undefined;
}

/** Each per-window series' growth after warm-up (and over the first window) and its trend. */
function seriesFigures(prefix: string, series: Record<string, number[]>): Record<string, number> {
  const figures: Record<string, number> = {};
  for (const [name, values] of Object.entries(series)) {
    Object.assign(figures, growthFigures(`${prefix}.${name}`, values));
    figures[`${prefix}.${name}_trend_pct`] = trendPct(values);
  }
  return figures;
}

/** Sums a counter's samples, those whose labels `keep` accepts. */
function counterSum(metrics: string, name: string, keep: (labels: string) => boolean = () => true): number {
  return samples(metrics, name)
    .filter((sample) => keep(sample.labels))
    .reduce((total, sample) => total + sample.value, 0);
}

/**
 * The reconciler's long-running loop over 1,000 objects for the same time: `ferry reconcile` in a
 * process of its own (as `ferry serve` is above, so its RSS is the reconciler's alone, not the
 * bench's or the simulator's), a cycle every 5 s against the cluster simulator. Its `/metrics`
 * says when a cycle ends; the simulator's request log between two ends is one cycle's requests.
 */
async function reconcileSoak(): Promise<Record<string, number>> {
  const sim = await startClusterSimulator({ rolloutStepMs: 1000 });
  const { root, repo, env } = benchConfigRepo();
  let child: ChildProcess | undefined;
  try {
    sim.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: "bench" } });
    const kubeconfig = path.join(root, "kubeconfig");
    writeFileSync(kubeconfig, sim.kubeconfig(), { mode: 0o600 });
    const cycleEvery = sized(5, 1);
    child = spawn(
      process.execPath,
      [
        ...SERVE.args,
        "reconcile",
        ...["--repo", repo, "--path", "env", "--namespace", "bench", "--instance", "bench"],
        ...["--interval", `${cycleEvery}s`, "--prune", "--kubeconfig", kubeconfig],
        ...["--work-dir", path.join(root, "work"), "--listen", "127.0.0.1:0"],
      ],
      { cwd: path.resolve(import.meta.dirname, "../.."), env, stdio: ["ignore", "ignore", "pipe"] },
    );
    let output = "";
    child.stderr!.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
    const exited = new Promise<never>((_, reject) =>
      child!.once("exit", (code) => reject(new Error(`soak: ferry reconcile exited (${code}):\n${output}`))),
    );
    exited.catch(() => {});
    const statusUrl = await Promise.race([
      exited,
      (async () => {
        const deadline = Date.now() + 120_000;
        for (;;) {
          const match = /"message":"status server listening","url":"([^"]+)"/.exec(output);
          if (match) return match[1]!;
          if (Date.now() > deadline)
            throw new Error(`soak: ferry reconcile did not listen in 120 s:\n${output}`);
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      })(),
    ]);
    const metricsUrl = new URL("/metrics", statusUrl).href;
    /** The reconciler's cycles so far, from its /metrics (whose heap figures go into `window`). */
    const cyclesEnded = async (window?: ProcessWindow) => {
      const answer = await fetch(metricsUrl);
      if (!answer.ok) throw new Error(`soak: GET /metrics: HTTP ${answer.status}`);
      const text = await answer.text();
      if (window) takeHeap(window, text);
      return {
        ended: counterSum(text, "ferry_reconcile_cycles_total"),
        failed: counterSum(
          text,
          "ferry_reconcile_cycles_total",
          (labels) => !labels.includes('result="success"'),
        ),
      };
    };
    phase("reconcile start");
    // The first cycle converges the 1,000 objects; the soak's windows start after it.
    let seen = await cyclesEnded();
    while (seen.ended < 1) {
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 250))]);
      seen = await cyclesEnded();
    }
    if (seen.failed > 0) throw new Error(`soak: the converge failed:\n${output}`);
    phase("converged");
    sim.resetRequests();
    const windows: (ProcessWindow & { requestsPerCycle: number[]; cycles: number })[] = [];
    for (let index = 0; index < WINDOWS; index++) {
      const opened = { ...emptyProcessWindow(), requestsPerCycle: [] as number[], cycles: 0 };
      const ends = performance.now() + WINDOW_MS;
      while (performance.now() < ends) {
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 250))]);
        takeProcess(opened, child.pid!);
        const now = await cyclesEnded(opened);
        if (now.failed > 0) throw new Error(`soak: a cycle failed:\n${output}`);
        if (now.ended === seen.ended) continue;
        // A poll every 250 ms and a cycle every 5 s: one cycle ended since the last poll (were it
        // more, they would share the requests evenly).
        const requests = sim.requests().length;
        sim.resetRequests();
        opened.requestsPerCycle.push(requests / (now.ended - seen.ended));
        opened.cycles += now.ended - seen.ended;
        seen = now;
      }
      windows.push(opened);
    }
    const figures: Record<string, number> = {
      "soak.reconcile.minutes": (WINDOWS * WINDOW_MS) / 60_000,
      [`soak.reconcile.objects`]: OBJECTS,
      "soak.reconcile.cycles": windows.reduce((sum, w) => sum + w.cycles, 0),
    };
    windows.forEach((w, index) => {
      const key = `soak.reconcile.window_${String(index + 1).padStart(2, "0")}`;
      Object.assign(figures, processWindowFigures(key, w));
      figures[`${key}.requests_per_cycle_max`] = Math.max(0, ...w.requestsPerCycle);
    });
    Object.assign(figures, seriesFigures("soak.reconcile", processSeries(windows)));
    figures["soak.reconcile.requests_per_cycle_max"] = Math.max(
      0,
      ...windows.flatMap((w) => w.requestsPerCycle),
    );
    return figures;
  } finally {
    if (child) await stopChild(child);
    rmSync(root, { recursive: true, force: true });
    await sim.close();
  }
}

export async function bench(): Promise<Record<string, number>> {
  if (ONLY !== undefined && ONLY !== "serve" && ONLY !== "reconcile")
    throw new Error(`FERRY_SOAK_ONLY=${ONLY}: use serve or reconcile`);
  return {
    ...(ONLY !== "reconcile" ? await serveSoak() : {}),
    ...(ONLY !== "serve" ? await reconcileSoak() : {}),
  };
}
