/**
 * `ferry reconcile` — the in-cluster reconciler (docs/config.md "CLI"): pulls the config repo,
 * renders `--path`, applies the difference with server-side apply, prunes what left Git
 * (`--prune`), self-heals, and reports status on `--listen` and to GitHub Deployments.
 */
import { parsePropagationPolicy } from "../reconciler/sync-options.js";
import { chartRegistryClient } from "./chart-registry.js";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { parseDurationWithin } from "../core/duration.js";
import { DEFAULT_PRUNE_OPTIONS, formatSyncPlan } from "../reconciler/plan.js";
import { DEFAULT_PRUNE_GRACE_CYCLES } from "../reconciler/reconcile-cycle.js";
import { describeObjects } from "../reconciler/reconciler.js";
import { buildReconciler, startReconciler, type ReconcilerSetup } from "../reconciler/start.js";
import { printRbac } from "../reconciler/print-rbac.js";
import { parseListenAddress } from "../adapters/http/reconciler-status-server.js";
import { diffEnvironment, formatDiffPlain } from "../core/diff/index.js";
import type { DryRunSides } from "../reconciler/dry-run-sides.js";
import { cliRedactor } from "./diff.js";
import { argsFromEnv } from "./flag-env.js";
import { githubCredentials } from "./reconcile-github.js";
import { EXIT, UsageError, type CliIo } from "./io.js";

const USAGE =
  "usage: ferry reconcile --repo URL|PATH --path DIR [--ref REF] [--namespace NS] [--interval 2m] [--once] [--dry-run [--diff]] [--no-self-heal]\n" +
  "         [--prune] [--allow-empty] [--max-prune N] [--max-prune-percent P] [--create-namespace] [--environment NAME]\n" +
  "         [--instance NAME] [--kubeconfig FILE] [--listen ADDR] [--github-repo O/R] [--github-api-url URL] [--work-dir DIR]\n" +
  "         [--allow-namespace NS]... [--allow-cluster-kind KIND]... [--allow-remote-base PREFIX]... [--helm-values FILE]...\n" +
  "         [--allow-plaintext-secrets] [--render-memory-limit 384Mi] [--status-listen ADDR] [--request-timeout 30s]\n" +
  "         [--cycle-deadline 10m] [--prune-grace-cycles 3] [--sops-age-key-file FILE]\n" +
  "         [--prune-propagation background|foreground|orphan]\n" +
  "         [--github-app-id ID --github-app-key-file FILE [--github-installation-id ID]]\n" +
  "         [--inventory-namespace NS] [--print-rbac]\n" +
  "each flag not given may come from FERRY_RECONCILE_<FLAG> (--github-repo: FERRY_RECONCILE_GITHUB_REPO; true/false for\n" +
  "a switch, comma-separated for a repeatable flag); the command line wins\n" +
  "tokens come from the environment: FERRY_GITHUB_TOKEN (Deployment statuses; also git), FERRY_GIT_TOKEN (git only),\n" +
  "or, with --github-app-id and --github-app-key-file, installation tokens minted from the App's key as they expire;\n" +
  "FERRY_STATUS_TOKEN (bearer token for /status and /metrics on a --listen address off loopback)\n";

function count(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text))
    throw new UsageError(`${flag} must be a whole number, got ${JSON.stringify(text)}\n${USAGE}`);
  return Number(text);
}

/** `512Mi`, `1Gi`, or plain bytes. */
function byteSize(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const match = /^(\d+)(Ki|Mi|Gi)?$/.exec(text);
  const bytes = match
    ? Number(match[1]) * { "": 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[match[2] ?? ""]!
    : NaN;
  if (!Number.isSafeInteger(bytes) || bytes < 64 * 1024 ** 2)
    throw new UsageError(
      `${flag} must be a size of at least 64Mi (e.g. 512Mi, 2Gi), got ${JSON.stringify(text)}\n${USAGE}`,
    );
  return bytes;
}

/** The flags; each may also come from FERRY_RECONCILE_<FLAG> (src/cli/flag-env.ts). */
const OPTIONS = {
  repo: { type: "string" },
  path: { type: "string" },
  ref: { type: "string" },
  namespace: { type: "string" },
  interval: { type: "string", default: "2m" },
  once: { type: "boolean", default: false },
  "dry-run": { type: "boolean", default: false },
  diff: { type: "boolean", default: false },
  "no-self-heal": { type: "boolean", default: false },
  prune: { type: "boolean", default: false },
  "allow-empty": { type: "boolean", default: false },
  "max-prune": { type: "string" },
  "max-prune-percent": { type: "string" },
  "create-namespace": { type: "boolean", default: false },
  environment: { type: "string" },
  instance: { type: "string" },
  kubeconfig: { type: "string" },
  listen: { type: "string" },
  "status-listen": { type: "string" },
  "request-timeout": { type: "string", default: "30s" },
  "cycle-deadline": { type: "string", default: "10m" },
  "github-repo": { type: "string" },
  "github-api-url": { type: "string" },
  "github-app-id": { type: "string" },
  "github-app-key-file": { type: "string" },
  "github-installation-id": { type: "string" },
  "work-dir": { type: "string" },
  "inventory-namespace": { type: "string" },
  "allow-namespace": { type: "string", multiple: true, default: [] as string[] },
  "allow-cluster-kind": { type: "string", multiple: true, default: [] as string[] },
  "allow-plaintext-secrets": { type: "boolean", default: false },
  "allow-remote-base": { type: "string", multiple: true, default: [] as string[] },
  "helm-values": { type: "string", multiple: true, default: [] as string[] },
  "render-memory-limit": { type: "string" },
  "sops-age-key-file": { type: "string" },
  "prune-grace-cycles": { type: "string" },
  "prune-propagation": { type: "string" },
  "print-rbac": { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

/** `--dry-run --diff`: live against what the apply would store, in `ferry diff`'s format (docs/diff.md). */
function liveDiff(sides: DryRunSides, instance: string, env: NodeJS.ProcessEnv): string {
  const diff = diffEnvironment(sides.live, sides.desired, { labels: { base: "live", head: "desired" } });
  const secrets = cliRedactor(env);
  return formatDiffPlain([{ environment: instance, diff }], (text) => secrets.redact(text));
}

/** Where the environment's flags start: `FERRY_RECONCILE_REPO` is `--repo`. */
export const FLAG_ENV_PREFIX = "FERRY_RECONCILE_";

export async function run(args: string[], io: CliIo): Promise<number> {
  const fromEnv = Object.fromEntries(
    Object.entries(OPTIONS).filter(([flag]) => flag !== "help" && flag !== "print-rbac"),
  );
  const { values } = parseArgs({
    args: [...args, ...argsFromEnv(fromEnv, args, io.env, FLAG_ENV_PREFIX)],
    strict: true,
    allowPositionals: false,
    options: OPTIONS,
  });
  if (values.help) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  if (!values.repo) throw new UsageError(`--repo is required\n${USAGE}`);
  if (!values.path) throw new UsageError(`--path is required\n${USAGE}`);
  if (values.diff && !values["dry-run"]) throw new UsageError(`--diff goes with --dry-run\n${USAGE}`);
  const maxPrunePercent = count(
    values["max-prune-percent"],
    "--max-prune-percent",
    DEFAULT_PRUNE_OPTIONS.maxPrunePercent,
  );
  if (maxPrunePercent > 100) throw new UsageError(`--max-prune-percent must be at most 100\n${USAGE}`);
  let listen;
  let statusListen;
  try {
    listen = values.listen ? parseListenAddress(values.listen) : undefined;
    statusListen = values["status-listen"] ? parseListenAddress(values["status-listen"]) : undefined;
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  const githubToken = await githubCredentials(values, io, USAGE);
  if (values["github-repo"] && !githubToken) {
    // The install manifests mount the token as optional: run without reporting rather than not at all.
    io.stderr(
      "ferry reconcile: --github-repo given but FERRY_GITHUB_TOKEN is empty (and no --github-app-id); not reporting Deployment statuses\n",
    );
  }
  const gitToken = io.env.FERRY_GIT_TOKEN || githubToken;
  const instance = values.instance ?? values.environment ?? "default";
  if (values["allow-remote-base"].some((prefix) => prefix.trim() === ""))
    throw new UsageError(
      `--allow-remote-base needs a prefix such as https://github.com/acme/bases\n${USAGE}`,
    );
  const prunePropagation =
    values["prune-propagation"] === undefined
      ? undefined
      : parsePropagationPolicy(values["prune-propagation"]);
  if (values["prune-propagation"] !== undefined && !prunePropagation)
    throw new UsageError(`--prune-propagation must be background, foreground or orphan\n${USAGE}`);
  const renderMemoryLimitBytes = byteSize(values["render-memory-limit"], "--render-memory-limit");
  const repo = /^[a-z][a-z0-9+.-]*:\/\//i.test(values.repo) ? values.repo : path.resolve(io.cwd, values.repo);

  const setup: ReconcilerSetup = {
    repo,
    path: values.path,
    instance,
    ...(values.ref ? { ref: values.ref } : {}),
    ...(values.environment ? { environment: values.environment } : {}),
    ...(values.namespace ? { namespace: values.namespace } : {}),
    // In a pod the reconciler keeps its inventory in its own namespace (downward API POD_NAMESPACE).
    ...(values["inventory-namespace"] || io.env.POD_NAMESPACE
      ? { inventoryNamespace: values["inventory-namespace"] || io.env.POD_NAMESPACE }
      : {}),
    createNamespace: values["create-namespace"],
    allowNamespaces: values["allow-namespace"],
    allowClusterKinds: values["allow-cluster-kind"],
    allowPlaintextSecrets: values["allow-plaintext-secrets"],
    allowRemoteBases: values["allow-remote-base"],
    ...(values["helm-values"].length > 0 ? { helmValues: values["helm-values"] } : {}),
    ...(renderMemoryLimitBytes !== undefined ? { renderMemoryLimitBytes } : {}),
    renderEnv: { ...io.env },
    ...(values["sops-age-key-file"]
      ? { sopsAgeKeyFile: path.resolve(io.cwd, values["sops-age-key-file"]) }
      : {}),
    chartRegistry: chartRegistryClient(io.env),
    ...(values.kubeconfig ? { kubeconfigFile: path.resolve(io.cwd, values.kubeconfig) } : {}),
    kubeEnv: io.env,
    ...(gitToken ? { gitToken } : {}),
    gitEnv: {
      PATH: io.env.PATH,
      HOME: io.env.HOME ?? tmpdir(),
      ...(io.env.SSL_CERT_FILE ? { SSL_CERT_FILE: io.env.SSL_CERT_FILE } : {}),
    },
    workDir: values["work-dir"]
      ? path.resolve(io.cwd, values["work-dir"])
      : path.join(tmpdir(), `ferry-reconcile-${instance}`),
    dryRun: values["dry-run"],
    selfHeal: !values["no-self-heal"],
    ...(values["prune-grace-cycles"] !== undefined
      ? {
          pruneGraceCycles: count(
            values["prune-grace-cycles"],
            "--prune-grace-cycles",
            DEFAULT_PRUNE_GRACE_CYCLES,
          ),
        }
      : {}),
    ...(prunePropagation ? { prunePropagation } : {}),
    prune: {
      prune: values.prune,
      allowEmpty: values["allow-empty"],
      maxPrune: count(values["max-prune"], "--max-prune", DEFAULT_PRUNE_OPTIONS.maxPrune),
      maxPrunePercent,
    },
    intervalMs: parseDurationWithin("--interval", values.interval, 1000, 7 * 24 * 60 * 60 * 1000),
    requestTimeoutMs: parseDurationWithin(
      "--request-timeout",
      values["request-timeout"],
      1000,
      10 * 60 * 1000,
    ),
    cycleDeadlineMs: parseDurationWithin(
      "--cycle-deadline",
      values["cycle-deadline"],
      10_000,
      24 * 60 * 60 * 1000,
    ),
    ...(io.env.FERRY_STATUS_TOKEN ? { statusToken: io.env.FERRY_STATUS_TOKEN } : {}),
    watch: !values.once && !values["dry-run"],
    ...(values["github-repo"] && githubToken
      ? {
          github: {
            repository: values["github-repo"],
            token: githubToken,
            ...(values["github-api-url"] ? { apiUrl: values["github-api-url"] } : {}),
          },
        }
      : {}),
    log: (message, fields) =>
      io.stderr(`${JSON.stringify({ time: io.now().toISOString(), message, ...fields })}\n`),
    now: io.now,
  };

  if (values["print-rbac"]) {
    io.stdout(await printRbac(setup));
    return EXIT.ok;
  }

  if (values.once || values["dry-run"]) {
    const reconciler = buildReconciler(setup);
    const result = await reconciler.cycle();
    await reconciler.stop();
    if (values["dry-run"] && result.plan) io.stdout(formatSyncPlan(result.plan));
    if (values.diff && result.dryRunSides) io.stdout(`\n${liveDiff(result.dryRunSides, instance, io.env)}`);
    else if (!values["dry-run"]) {
      io.stdout(
        `revision ${result.revision ?? "(none)"}: ${result.sync}, ${result.health}; applied ${result.applied.length}, pruned ${result.pruned.length}\n`,
      );
      for (const line of describeObjects(result)) io.stdout(`  ${line}\n`);
    }
    for (const note of result.notes ?? []) io.stderr(`ferry reconcile: ${note}\n`);
    for (const error of result.errors) io.stderr(`ferry reconcile: ${error}\n`);
    if (values["dry-run"]) return result.errors.length === 0 ? EXIT.ok : EXIT.invalid;
    return result.ok ? EXIT.ok : EXIT.invalid;
  }

  const running = await startReconciler({
    ...setup,
    ...(listen ? { listen } : {}),
    ...(statusListen ? { statusListen } : {}),
  });
  if (running.statusUrl) setup.log?.("status server listening", { url: running.statusUrl });
  if (running.internalStatusUrl)
    setup.log?.("internal status server listening", { url: running.internalStatusUrl });
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await running.stop();
  return EXIT.ok;
}
