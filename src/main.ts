/**
 * `ferry serve`: the GitHub App server. Serves Probot's webhook endpoint, the registry receivers,
 * `/healthz`, `/metrics` (Prometheus) and `/status`, and runs the periodic registry scan with
 * jitter. Started by `ferry serve` (and `npm start`), which hands it the environment
 * (`serverOptionsFromEnv`): the CLI is the only place that reads `process.env`.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createNodeMiddleware, Probot, ProbotOctokit } from "probot";
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { createWriteBudget } from "./adapters/github/write-budget.js";
import { singleMembership, type Membership } from "./adapters/kubernetes/lease-membership.js";
import { createFerry, type Ferry, type FerryAppOptions, type ScanRound } from "./app.js";
import { ScanState } from "./app/scan-state.js";
import { parseDuration } from "./core/duration.js";
import { UserError } from "./core/errors.js";
import { createRegistryReceiver, type RegistryReceiverOptions } from "./handlers/registry/index.js";

/** GitHub caps webhook payloads at 25 MB; a bigger body is not GitHub and is refused unread (docs/reliability.md row 4). */
const GITHUB_MAX_BODY_BYTES = 25 * 1024 * 1024;

/** At most this many retries of one request on rate limits (docs/reliability.md row 21, goal G6): deferred, never a hot loop. */
const MAX_RATE_LIMIT_RETRIES = 3;

/**
 * Production Octokit: Probot's throttling (which honours `retry-after` and the rate-limit reset)
 * and retry plugins, with bounded retries instead of Probot's retry-forever default.
 */
export const FerryOctokit = ProbotOctokit.defaults((options: Record<string, unknown>) => ({
  ...options,
  retry: { retries: 3, ...(options.retry as object | undefined) },
  throttle: {
    // Probot passes its own handlers here (its secondary-limit one never retries): ours go last.
    ...(options.throttle as object | undefined),
    onRateLimit: (_retryAfter: number, _request: unknown, _octokit: unknown, retryCount: number) =>
      retryCount < MAX_RATE_LIMIT_RETRIES,
    onSecondaryRateLimit: (_retryAfter: number, _request: unknown, _octokit: unknown, retryCount: number) =>
      retryCount < MAX_RATE_LIMIT_RETRIES,
  },
}));

export interface FerryServerOptions {
  appId: string | number;
  privateKey: string;
  webhookSecret: string;
  /** GitHub API base URL (GHE or the emulator); default api.github.com. */
  baseUrl?: string;
  /** Web URL for links; default derived from baseUrl. */
  webUrl?: string;
  host?: string;
  port?: number;
  /** Tests pass `ProbotOctokit.defaults(… throttle/retry disabled …)`. */
  Octokit?: typeof ProbotOctokit;
  registrySecrets?: RegistryReceiverOptions["secrets"];
  registryCoalesceMs?: number;
  /** Periodic scan; default 5 minutes, ±20 % jitter; false to disable. */
  scanIntervalMs?: number | false;
  /**
   * Who shares the periodic scan (Kubernetes Leases, see `ferry serve --kubeconfig`); default this
   * process alone. Started and stopped with the server.
   */
  membership?: Membership;
  /** An installation with more repositories than this is split by repository among members (default 500). */
  largeInstallationRepositories?: number;
  /** Refuse weak webhook secrets (NODE_ENV=production). */
  production?: boolean;
  logLevel?: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
  /** A pino logger to use instead of Probot's stdout one (the reliability suite scans it for leaked secrets). */
  log?: NonNullable<ConstructorParameters<typeof Probot>[0]>["log"];
  ferry?: FerryAppOptions;
}

export interface FerryServer {
  url: string;
  port: number;
  probot: Probot;
  ferry: Ferry;
  /** Runs the periodic scan now and waits for it (and the work it queued). */
  scanNow(): Promise<ScanRound>;
  membership: Membership;
  /** Waits for queued background work (webhook handlers, hints). */
  idle(): Promise<void>;
  metrics: Registry;
  close(): Promise<void>;
}

/** The operator's to fix (exit 1 with the message), like any other bad setting. */
export class WeakWebhookSecretError extends UserError {
  constructor(message: string) {
    super("weak-webhook-secret", message);
  }
}

export async function startFerryServer(options: FerryServerOptions): Promise<FerryServer> {
  if (options.production && (options.webhookSecret.length === 0 || options.webhookSecret === "development")) {
    // docs/reliability.md row 1: an empty or default secret would accept forged webhooks.
    throw new WeakWebhookSecretError("WEBHOOK_SECRET must be set to a strong secret in production");
  }
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const pullRequests = new Counter({
    name: "ferry_pull_requests_total",
    help: "Ferry PRs opened or updated",
    labelNames: ["action"],
    registers: [metrics],
  });
  const hintsReceived = new Counter({
    name: "ferry_registry_hints_total",
    help: "Registry hints received (after coalescing)",
    registers: [metrics],
  });
  const scans = new Counter({ name: "ferry_scans_total", help: "Periodic scans run", registers: [metrics] });
  const membership = options.membership ?? singleMembership();
  const scanState = new ScanState(membership);
  registerScanMetrics(metrics, scanState, membership);
  // A cut-off replica (no members) keeps the last fleet size it knew for its webhook work.
  let fleetSize = 1;
  const budgetShare = (): number => {
    const live = membership.members().length;
    if (live > 0) fleetSize = live;
    return fleetSize;
  };
  // Each installation's content-creating requests, this replica's part of GitHub's 80 a minute.
  const writeBudget = createWriteBudget({ share: budgetShare });

  const probot = new Probot({
    appId: options.appId,
    privateKey: options.privateKey,
    secret: options.webhookSecret,
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
    Octokit: (options.Octokit ?? (FerryOctokit as unknown as typeof ProbotOctokit)).plugin(
      writeBudget.plugin as unknown as Parameters<typeof ProbotOctokit.plugin>[0],
    ) as unknown as typeof ProbotOctokit,
    logLevel: options.logLevel ?? "info",
    ...(options.log ? { log: options.log } : {}),
  });
  const ferry = createFerry({
    budgetShare,
    ...options.ferry,
    webUrl: options.webUrl ?? options.ferry?.webUrl ?? webUrlFor(options.baseUrl),
    onPullRequest: (event) => {
      pullRequests.inc({ action: event.action });
      options.ferry?.onPullRequest?.(event);
    },
  });
  registerBudgetMetrics(metrics, () => ferry.registryBudgetUse());
  const webhooks = await createNodeMiddleware(ferry.app, { probot, webhooksPath: "/api/github/webhooks" });
  const receiver = createRegistryReceiver({
    secrets: options.registrySecrets ?? {},
    ...(options.registryCoalesceMs !== undefined ? { coalesceMs: options.registryCoalesceMs } : {}),
    onHints: async (hints) => {
      hintsReceived.inc(hints.length);
      await ferry.hint(probot, hints);
    },
    log: {
      info: (fields, message) => probot.log.info(fields, message),
      warn: (fields, message) => probot.log.warn(fields, message),
    },
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/healthz") return send(res, 200, "text/plain", "ok\n");
    if (req.method === "GET" && path === "/metrics")
      return send(res, 200, metrics.contentType, await metrics.metrics());
    if (req.method === "GET" && path === "/status")
      return send(
        res,
        200,
        "application/json",
        // "ferry:scan" cannot be a repository's full name (no colon in GitHub names).
        JSON.stringify({
          ...(await ferry.status(probot)),
          "ferry:scan": {
            ...scanState.status(Date.now()),
            registryBudgets: ferry.registryBudgetUse(),
            githubWriteBudgets: writeBudget.use(),
          },
        }),
      );
    if (path?.startsWith("/registry/") && (await receiver(req, res))) return;
    if (req.method === "POST" && path === "/api/github/webhooks") {
      // Octokit's middleware buffers any body whole; read it here with a cap and hand it over as a string.
      const body = await readCappedBody(req, GITHUB_MAX_BODY_BYTES);
      if (body === undefined) {
        res.writeHead(413, { "content-type": "text/plain", connection: "close" });
        res.end("payload too large\n");
        return;
      }
      // docs/reliability.md rows 1-3 and 5: refuse before Probot parses anything. JSON only (415), and
      // the signature checked here over the raw bytes so that a bad one is a 401, never a 400/500.
      const contentType = String(req.headers["content-type"] ?? "")
        .split(";")[0]!
        .trim()
        .toLowerCase();
      if (contentType !== "application/json")
        return send(res, 415, "text/plain", "content type must be application/json\n");
      if (!validGitHubSignature(options.webhookSecret, body, req.headers["x-hub-signature-256"])) {
        return send(res, 401, "text/plain", "invalid or missing X-Hub-Signature-256\n");
      }
      (req as IncomingMessage & { body?: string }).body = body.toString("utf8");
    }
    const handled = await webhooks(req, res);
    if (handled === false || !res.headersSent) {
      if (!res.headersSent) send(res, 404, "text/plain", "not found\n");
    }
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      probot.log.error({ error: (error as Error).message }, "request failed");
      if (!res.headersSent) send(res, 500, "text/plain", "internal error\n");
    });
  });
  // Slow-drip clients are cut off (docs/reliability.md row 4).
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve),
  );
  const { port } = server.address() as AddressInfo;

  const scanNow = async (): Promise<ScanRound> => {
    scans.inc();
    const round = await ferry.scan(probot, {
      self: membership.self,
      members: () => membership.members(),
      largeInstallations: () => membership.largeInstallations(),
      announceLarge: (ids) => membership.announceLarge(ids),
      ...(options.largeInstallationRepositories !== undefined
        ? { largeInstallationRepositories: options.largeInstallationRepositories }
        : {}),
    });
    await ferry.idle();
    scanState.record(round, Date.now());
    return round;
  };
  await membership.start();
  if (membership.snapshot().mode === "single")
    probot.log.info(
      { member: membership.self },
      "membership: no in-cluster config and no --kubeconfig; scanning every installation as the only member",
    );
  let timer: NodeJS.Timeout | undefined;
  const interval = options.scanIntervalMs ?? parseDuration("5m");
  const schedule = (): void => {
    if (interval === false) return;
    // ±20 % jitter spreads the scans of several replicas and installations.
    const delay = interval * (0.8 + Math.random() * 0.4);
    timer = setTimeout(() => {
      scanNow()
        .catch((error: unknown) => probot.log.warn({ error: (error as Error).message }, "scan failed"))
        .finally(schedule);
    }, delay);
    timer.unref();
  };
  schedule();

  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    port,
    probot,
    ferry,
    scanNow,
    membership,
    idle: () => ferry.idle(),
    metrics,
    async close() {
      if (timer) clearTimeout(timer);
      receiver.close();
      await membership.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await ferry.idle();
    },
  };
}

/** Members, shard size and scan lag as Prometheus gauges, read at scrape time. */
function registerScanMetrics(metrics: Registry, scanState: ScanState, membership: Membership): void {
  new Gauge({
    name: "ferry_scan_members",
    help: "Live members sharing the periodic scan (0: this replica lost its Lease)",
    registers: [metrics],
    collect() {
      this.set(membership.members().length);
    },
  });
  new Gauge({
    name: "ferry_scan_shard_installations",
    help: "Installations this replica covered in its last scan round",
    registers: [metrics],
    collect() {
      this.set(scanState.shardSize());
    },
  });
  new Gauge({
    name: "ferry_scan_lag_seconds",
    help: "Oldest time since an installation of this replica's shard was last scanned",
    registers: [metrics],
    collect() {
      this.set(scanState.lagSeconds(Date.now()));
    },
  });
}

/** Each registry's budget use on this replica (its share of the fleet's), read at scrape time. */
function registerBudgetMetrics(
  metrics: Registry,
  use: () => Record<string, { used: number; limit: number }>,
): void {
  new Gauge({
    name: "ferry_registry_budget_used",
    help: "Registry requests this replica started in the last minute",
    labelNames: ["registry"],
    registers: [metrics],
    collect() {
      this.reset();
      for (const [registry, entry] of Object.entries(use())) this.set({ registry }, entry.used);
    },
  });
  new Gauge({
    name: "ferry_registry_budget_limit",
    help: "This replica's share of the registry request budget per minute",
    labelNames: ["registry"],
    registers: [metrics],
    collect() {
      this.reset();
      for (const [registry, entry] of Object.entries(use())) this.set({ registry }, entry.limit);
    },
  });
}

/** The body, or undefined once it passes `max` bytes (reading stops there; a declared length over it is not read at all). */
function readCappedBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  if (Number(req.headers["content-length"]) > max) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) {
        req.off("data", onData);
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** `sha256=<64 lowercase hex>` HMAC of the raw body, compared in constant time. */
export function validGitHubSignature(
  secret: string,
  body: Buffer,
  header: string | string[] | undefined,
): boolean {
  if (typeof header !== "string" || !/^sha256=[0-9a-f]{64}$/.test(header) || secret.length === 0)
    return false;
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { "content-type": type });
  res.end(body);
}

function webUrlFor(baseUrl: string | undefined): string {
  if (!baseUrl || /api\.github\.com/.test(baseUrl)) return "https://github.com";
  return baseUrl.replace(/\/api\/v3\/?$/, "").replace(/\/+$/, "");
}

/** Server options from the environment (APP_ID, PRIVATE_KEY[_PATH], WEBHOOK_SECRET, GHE_HOST/GITHUB_API_URL…). */
export function serverOptionsFromEnv(env: NodeJS.ProcessEnv): FerryServerOptions {
  const appId = env.APP_ID;
  const privateKey =
    env.PRIVATE_KEY ?? (env.PRIVATE_KEY_PATH ? readPrivateKey(env.PRIVATE_KEY_PATH) : undefined);
  if (!appId || !privateKey)
    throw new UserError("missing-credentials", "APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) are required");
  const baseUrl =
    env.GITHUB_API_URL ??
    (env.GHE_HOST ? `${env.GHE_PROTOCOL ?? "https"}://${env.GHE_HOST}/api/v3` : undefined);
  const options: FerryServerOptions = {
    appId,
    privateKey: privateKey.replace(/\\n/g, "\n"),
    webhookSecret: env.WEBHOOK_SECRET ?? "",
    production: env.NODE_ENV === "production",
    host: env.HOST ?? "0.0.0.0",
    port: Number(env.PORT ?? 3000),
    registrySecrets: {
      distribution: env.FERRY_REGISTRY_WEBHOOK_DISTRIBUTION,
      harbor: env.FERRY_REGISTRY_WEBHOOK_HARBOR,
      dockerhub: env.FERRY_REGISTRY_WEBHOOK_DOCKERHUB,
      quay: env.FERRY_REGISTRY_WEBHOOK_QUAY,
      generic: env.FERRY_REGISTRY_WEBHOOK_GENERIC,
    },
    ferry: {
      env: registryCredentialEnv(env),
      // A config repo picks its registry hosts: in production, not internal addresses unless allowed.
      refusePrivateRegistries: env.NODE_ENV === "production" && env.FERRY_ALLOW_PRIVATE_REGISTRIES !== "true",
    },
  };
  if (baseUrl) options.baseUrl = baseUrl;
  if (env.FERRY_SCAN_INTERVAL)
    options.scanIntervalMs =
      env.FERRY_SCAN_INTERVAL === "off" ? false : parseDuration(env.FERRY_SCAN_INTERVAL);
  if (env.FERRY_LARGE_INSTALLATION_REPOSITORIES) {
    const limit = Number(env.FERRY_LARGE_INSTALLATION_REPOSITORIES);
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new UserError(
        "invalid-setting",
        `FERRY_LARGE_INSTALLATION_REPOSITORIES must be a whole number of repositories, not ${JSON.stringify(env.FERRY_LARGE_INSTALLATION_REPOSITORIES)}`,
      );
    options.largeInstallationRepositories = limit;
  }
  if (env.LOG_LEVEL) options.logLevel = env.LOG_LEVEL as FerryServerOptions["logLevel"];
  return options;
}

/** Ferry's own secrets and the platform's: never readable through a config's `passwordEnv`/`tokenEnv`. */
const SERVER_SECRET_NAMES =
  /^(APP_ID|PRIVATE_KEY|PRIVATE_KEY_PATH|WEBHOOK_SECRET|WEBHOOK_PROXY_URL|CLIENT_ID|CLIENT_SECRET|GITHUB_.*|GH_.*|GHE_.*|FERRY_REGISTRY_WEBHOOK_.*|FERRY_GITHUB_TOKEN|KUBERNETES_.*|NODE_.*|NPM_.*|npm_.*|AWS_.*|GOOGLE_.*|AZURE_.*)$/;

/**
 * The environment variables a config repo may name as registry credentials. `.github/ferry.yml`
 * is written by whoever controls the config repo, and it also names the registry host: without
 * this filter it could send the app's private key to a host of its choosing. With
 * FERRY_REGISTRY_ENV_ALLOW (comma-separated names) only those are readable; otherwise every
 * variable except the server's and the platform's own secrets.
 */
export function registryCredentialEnv(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const allowed = env.FERRY_REGISTRY_ENV_ALLOW?.split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  const result: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) {
    if (allowed ? allowed.includes(name) : !SERVER_SECRET_NAMES.test(name)) result[name] = value;
  }
  return result;
}

function readPrivateKey(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw new UserError(
      "missing-credentials",
      `cannot read PRIVATE_KEY_PATH ${path}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`,
    );
  }
}
