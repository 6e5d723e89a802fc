/**
 * `ferry serve`: the GitHub App server. Wires Probot and the Ferry app to the routes (GitHub
 * webhooks, registry webhooks, `/status`, `/healthz` and `/metrics`) and runs the periodic
 * registry scan. Started by `ferry serve` (and `npm start`), which hands it the environment
 * (`serverOptionsFromEnv`): the CLI is the only place that reads `process.env`.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { nodeHttp } from "../adapters/http/node-http.js";
import type { AddressInfo, Socket } from "node:net";
import { Probot, ProbotOctokit } from "probot";
import type { Registry } from "prom-client";
import { displayUrl, PUBLIC_GOOD_TUF_MIRROR } from "../adapters/registry/index.js";
import { createWriteBudget, type WriteBudgetOptions } from "../adapters/github/write-budget.js";
import { singleMembership, type Membership } from "../adapters/kubernetes/membership.js";
import { ScanState } from "../app/scan-state.js";
import { githubContainerRegistry } from "../core/config/config-context.js";
import { NO_SECRET_BINDINGS } from "../core/config/secret-bindings.js";
import { createFerry, type Ferry, type FerryAppOptions, type ScanRound } from "../probot-app/create-ferry.js";
import { parseDuration } from "../core/duration.js";
import { UserError } from "../core/errors.js";
import { FerryOctokit } from "./ferry-octokit.js";
import { createGitHubWebhookRoute } from "./github-webhook-route.js";
import { createHealthRoutes } from "./health-routes.js";
import { schedulePeriodicScan } from "./periodic-scan.js";
import { startTrustedRootRefresh, type TrustedRootRefreshSettings } from "./trusted-root-refresh.js";
import { createRegistryReceiver, type RegistryReceiverOptions } from "./registry-receiver.js";
import { IntakeBudget, sourceOf, type IntakeLimits } from "./intake-budget.js";
import { sendText, type Route } from "./route.js";
import {
  createServerMetrics,
  registerBudgetGauges,
  registerIntakeGauges,
  registerScanGauges,
} from "./server-metrics.js";
import { createStatusPageRoute } from "./status-page.js";
import { createStatusRoute, startStatusListener } from "./status-route.js";

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
  /**
   * GitHub's secondary limits on content-creating requests per installation (default 80 a minute,
   * 500 an hour, github.com's); GitHub Enterprise Server's administrators may set others. `now`
   * and `sleep` are the budget's clock (default the wall clock): a test moves it instead of waiting.
   */
  githubWrites?: Pick<WriteBudgetOptions, "perMinute" | "perHour" | "now" | "sleep">;
  /** Refuse weak webhook secrets (NODE_ENV=production). */
  production?: boolean;
  logLevel?: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
  /** A pino logger to use instead of Probot's stdout one (the reliability suite scans it for leaked secrets). */
  log?: NonNullable<ConstructorParameters<typeof Probot>[0]>["log"];
  ferry?: Partial<FerryAppOptions>;
  /**
   * Bounds on webhook intake: bytes held at once across the routes and per source address (503
   * with Retry-After past them), connections per source, the header timeout and a body's minimum rate.
   */
  intake?: IntakeLimits;
  /** Open connections at once; further ones are dropped by Node (default 512). */
  maxConnections?: number;
  /**
   * Who reads `GET /status`: with `token`, the main listener serves it to `Authorization: Bearer
   * <token>`; with `listen`, a separate listener (an internal address) serves it without a token.
   * With neither, `/status` does not exist.
   */
  status?: { token?: string; listen?: { host: string; port: number } };
  /** Refresh the Sigstore trusted root through TUF at start and periodically (FERRY_SIGSTORE_TUF_MIRROR). */
  trustedRootRefresh?: TrustedRootRefreshSettings;
  /** Where the trusted root comes from, for the start log line (a file path or the shipped root). */
  trustedRootSource?: string;
}

export interface FerryServer {
  url: string;
  port: number;
  probot: Probot;
  ferry: Ferry;
  /** Runs the periodic scan now (this replica's share of it) and waits for it and the work it queued. */
  scanNow(): Promise<ScanRound>;
  membership: Membership;
  /** Waits for registry hints already past their coalescing window and for queued background work (webhook handlers). */
  idle(): Promise<void>;
  metrics: Registry;
  /** `/status` on the internal status listener, when one was asked for. */
  statusUrl?: string;
  /** The webhook routes' shared budget of request bodies in flight. */
  intake: IntakeBudget;
  /** Refreshes the Sigstore trusted root through TUF now, when a mirror is set (false: the last good root stays). */
  refreshTrustedRoot(): Promise<boolean>;
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
  const metrics = createServerMetrics();
  const membership = options.membership ?? singleMembership();
  const scanState = new ScanState(membership);
  registerScanGauges(metrics.registry, scanState, membership);
  // A cut-off replica (no members) keeps the last fleet size it knew for its webhook work.
  let fleetSize = 1;
  const budgetShare = (): number => {
    const live = membership.members().length;
    if (live > 0) fleetSize = live;
    return fleetSize;
  };
  // Each installation's content-creating requests, this replica's part of GitHub's secondary limits.
  const writeBudget = createWriteBudget({ share: budgetShare, ...options.githubWrites });
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
    // Plan seals are keyed by the webhook secret: every replica holds it, nobody else does.
    sealKey: options.ferry?.sealKey ?? options.webhookSecret,
    webUrl: options.webUrl ?? options.ferry?.webUrl ?? webUrlFor(options.baseUrl),
    heldSecrets: [
      options.webhookSecret,
      options.privateKey,
      ...Object.values(options.registrySecrets ?? {}),
      ...(options.status?.token ? [options.status.token] : []),
      ...(options.ferry?.heldSecrets ?? []),
    ],
    configContext: options.ferry?.configContext ?? {
      githubContainerRegistry: githubContainerRegistry(options.baseUrl),
      allowedEnv: [],
      refusePrivateRegistries: options.ferry?.refusePrivateRegistries ?? false,
      // Nothing bound: a config naming a secret is refused (serverOptionsFromEnv reads the bindings).
      secretBindings: NO_SECRET_BINDINGS,
    },
    onPullRequest: (event) => {
      metrics.pullRequests.inc({ action: event.action });
      options.ferry?.onPullRequest?.(event);
    },
    ...(options.ferry?.notify
      ? {
          notify: {
            ...options.ferry.notify,
            observe: (outcome, target) => {
              metrics.notifications.inc({ outcome, target });
              options.ferry?.notify?.observe?.(outcome, target);
            },
          },
        }
      : {}),
  });
  await probot.load(ferry.app);
  registerBudgetGauges(metrics.registry, () => ferry.registryBudgetUse());
  // "ferry:scan" cannot be a repository's full name (GitHub names have no colon).
  const statusWithScan = async (): Promise<Record<string, unknown>> => ({
    ...(await ferry.status(probot)),
    "ferry:scan": {
      ...scanState.status(Date.now()),
      registryBudgets: ferry.registryBudgetUse(),
      githubWriteBudgets: writeBudget.use(),
    },
  });
  const budget = new IntakeBudget(options.intake);
  registerIntakeGauges(metrics.registry, () => budget.inFlight);
  const receiver = createRegistryReceiver({
    secrets: options.registrySecrets ?? {},
    budget,
    ...(options.registryCoalesceMs !== undefined ? { coalesceMs: options.registryCoalesceMs } : {}),
    onHints: async (hints) => {
      metrics.hintsReceived.inc(hints.length);
      await ferry.hint(probot, hints);
    },
    log: {
      info: (fields, message) => probot.log.info(fields, message),
      warn: (fields, message) => probot.log.warn(fields, message),
    },
  });

  const routes: Route[] = [
    createHealthRoutes(metrics.registry),
    createStatusRoute(statusWithScan, { token: options.status?.token }),
    createStatusPageRoute(() => ferry.status(probot), { token: options.status?.token }),
    (req, res) => receiver(req, res),
    createGitHubWebhookRoute({
      secret: options.webhookSecret,
      budget,
      receive: (delivery) => probot.receive(delivery as Parameters<Probot["receive"]>[0]),
      onDeliveryError: (error, delivery) =>
        probot.log.warn({ ...delivery, err: error }, "signed delivery failed in the handlers"),
    }),
  ];
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? "/").split("?")[0]!;
    for (const route of routes) if (await route(req, res, path)) return;
    sendText(res, 404, "text/plain", "not found\n");
  };
  // Slow senders are cut off (docs/security.md "Webhook intake"): headers within the header
  // timeout (checked at least every second), a whole request within its timeout, a body at the minimum
  // rate (readRequestBody), and a bounded number of connections per source address.
  const server: Server = nodeHttp().createServer(
    {
      headersTimeout: budget.headerTimeoutMs,
      requestTimeout: budget.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(budget.headerTimeoutMs / 2))),
    },
    (req, res) => {
      handle(req, res).catch((error: unknown) => {
        // The stack stays in the log; the sender only learns that it failed.
        probot.log.error({ err: error }, "request failed");
        if (!res.headersSent) sendText(res, 500, "text/plain", "internal error\n");
      });
    },
  );
  server.on("connection", (socket: Socket) => {
    const release = budget.openConnection(sourceOf(socket.remoteAddress));
    if (!release) {
      socket.destroy();
      return;
    }
    socket.once("close", release);
  });
  server.maxConnections = options.maxConnections ?? 512;
  await new Promise<void>((resolve) =>
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve),
  );
  const { port } = server.address() as AddressInfo;
  const statusListener = options.status?.listen
    ? await startStatusListener(
        async (req, res, path) =>
          (await createStatusRoute(statusWithScan, { open: true })(req, res, path)) ||
          createStatusPageRoute(() => ferry.status(probot), { open: true })(req, res, path),
        options.status.listen,
        (error) => probot.log.error({ err: error }, "status request failed"),
      )
    : undefined;

  const scanNow = async (): Promise<ScanRound> => {
    metrics.scans.inc();
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
  const periodicScan = schedulePeriodicScan(options.scanIntervalMs ?? parseDuration("5m"), scanNow, (error) =>
    probot.log.warn({ error: (error as Error).message }, "scan failed"),
  );

  probot.log.info(
    {},
    `sigstore trusted root: ${options.trustedRootSource ?? "shipped with @sigstore/tuf (public-good instance)"}` +
      (options.trustedRootRefresh
        ? `, refreshed through TUF from ${displayUrl(options.trustedRootRefresh.mirrorURL ?? PUBLIC_GOOD_TUF_MIRROR)}`
        : ""),
  );
  const trustedRootRefresh = options.trustedRootRefresh
    ? startTrustedRootRefresh(options.trustedRootRefresh, (root) => ferry.setTrustedRoot(root), {
        info: (fields, message) => probot.log.info(fields, message),
        warn: (fields, message) => probot.log.warn(fields, message),
      })
    : undefined;
  await trustedRootRefresh?.refresh();

  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    port,
    probot,
    ferry,
    scanNow,
    membership,
    async idle() {
      await receiver.delivered();
      await ferry.idle();
    },
    metrics: metrics.registry,
    intake: budget,
    ...(statusListener ? { statusUrl: statusListener.url } : {}),
    refreshTrustedRoot: async () => (trustedRootRefresh ? trustedRootRefresh.refresh() : false),
    async close() {
      periodicScan.stop();
      trustedRootRefresh?.stop();
      receiver.close();
      await membership.stop();
      await statusListener?.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // Retries waiting for their delay are dropped: the next process's periodic scan redoes them.
      ferry.queue.close();
      await ferry.idle();
    },
  };
}

function webUrlFor(baseUrl: string | undefined): string {
  if (!baseUrl || /api\.github\.com/.test(baseUrl)) return "https://github.com";
  return baseUrl.replace(/\/api\/v3\/?$/, "").replace(/\/+$/, "");
}
