/**
 * `ferry reconcile` — the in-cluster reconciler (DESIGN.md "CLI"): pulls the config repo,
 * renders `--path`, applies the difference with server-side apply, prunes what left Git
 * (`--prune`), self-heals, and reports status on `--listen` and to GitHub Deployments.
 */
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { ConfigRepoFetcher } from "../adapters/git/config-repo-fetcher.js";
import { KubeCluster, loadKubeConfig } from "../adapters/kubernetes/kube-cluster.js";
import { parseDuration } from "../core/duration.js";
import { UserError } from "../core/errors.js";
import { GitHubDeploymentReporter } from "../reconciler/github-deployment-reporter.js";
import { DEFAULT_PRUNE_OPTIONS, formatPlan } from "../reconciler/plan.js";
import type { CycleSettings } from "../reconciler/reconcile-cycle.js";
import { createReconciler, describeObjects } from "../reconciler/reconciler.js";
import { parseListenAddress, startStatusServer } from "../reconciler/status-server.js";
import { EXIT, UsageError, type CliIo } from "./io.js";

const USAGE =
  "usage: ferry reconcile --repo URL|PATH --path DIR [--ref REF] [--namespace NS] [--interval 2m] [--once] [--dry-run]\n" +
  "         [--prune] [--allow-empty] [--max-prune N] [--max-prune-percent P] [--create-namespace] [--environment NAME]\n" +
  "         [--instance NAME] [--kubeconfig FILE] [--listen ADDR] [--github-repo O/R] [--github-api-url URL] [--work-dir DIR]\n";

/** Label values: at most 63 characters, alphanumerics with `-`, `_` or `.` inside. */
const LABEL_VALUE = /^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$/;

function count(text: string | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag} must be a whole number, got ${JSON.stringify(text)}\n${USAGE}`);
  return Number(text);
}

export async function run(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      repo: { type: "string" },
      path: { type: "string" },
      ref: { type: "string" },
      namespace: { type: "string" },
      interval: { type: "string", default: "2m" },
      once: { type: "boolean", default: false },
      "dry-run": { type: "boolean", default: false },
      prune: { type: "boolean", default: false },
      "allow-empty": { type: "boolean", default: false },
      "max-prune": { type: "string" },
      "max-prune-percent": { type: "string" },
      "create-namespace": { type: "boolean", default: false },
      environment: { type: "string" },
      instance: { type: "string" },
      kubeconfig: { type: "string" },
      listen: { type: "string" },
      "github-repo": { type: "string" },
      "github-api-url": { type: "string" },
      "work-dir": { type: "string" },
      "inventory-namespace": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  if (!values.repo) throw new UsageError(`--repo is required\n${USAGE}`);
  if (!values.path) throw new UsageError(`--path is required\n${USAGE}`);
  const intervalMs = parseDuration(values.interval);
  const instance = values.instance ?? values.environment ?? "default";
  if (!LABEL_VALUE.test(instance)) {
    throw new UserError("invalid-instance", `instance name ${JSON.stringify(instance)} must be a valid label value (set --instance)`);
  }
  const maxPrunePercent = count(values["max-prune-percent"], "--max-prune-percent", DEFAULT_PRUNE_OPTIONS.maxPrunePercent);
  if (maxPrunePercent > 100) throw new UsageError(`--max-prune-percent must be at most 100\n${USAGE}`);

  let kubeConfig;
  try {
    kubeConfig = loadKubeConfig(values.kubeconfig ? { kubeconfigFile: values.kubeconfig } : {});
  } catch (error) {
    throw new UserError("invalid-kubeconfig", `cannot load the kubeconfig: ${(error as Error).message}`);
  }
  const contextNamespace = kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace;
  const namespace = values.namespace ?? contextNamespace ?? "default";
  const cluster = new KubeCluster(kubeConfig);

  const repo = values.repo;
  const source = new ConfigRepoFetcher({
    repo: /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) ? repo : path.resolve(io.cwd, repo),
    ...(values.ref ? { ref: values.ref } : {}),
    workDir: values["work-dir"] ?? path.join(tmpdir(), `ferry-reconcile-${instance}`),
    ...(io.env.FERRY_GIT_TOKEN || io.env.FERRY_GITHUB_TOKEN ? { token: io.env.FERRY_GIT_TOKEN || io.env.FERRY_GITHUB_TOKEN } : {}),
    env: { PATH: io.env.PATH, HOME: io.env.HOME ?? tmpdir(), ...(io.env.SSL_CERT_FILE ? { SSL_CERT_FILE: io.env.SSL_CERT_FILE } : {}) },
  });

  const settings: CycleSettings = {
    instance,
    path: values.path,
    namespace,
    // In a pod the reconciler keeps its inventory in its own namespace (downward API POD_NAMESPACE).
    inventoryNamespace: values["inventory-namespace"] ?? io.env.POD_NAMESPACE ?? namespace,
    createNamespace: values["create-namespace"],
    dryRun: values["dry-run"],
    prune: {
      prune: values.prune,
      allowEmpty: values["allow-empty"],
      maxPrune: count(values["max-prune"], "--max-prune", DEFAULT_PRUNE_OPTIONS.maxPrune),
      maxPrunePercent,
    },
  };

  let reporter: GitHubDeploymentReporter | undefined;
  if (values["github-repo"]) {
    const token = io.env.FERRY_GITHUB_TOKEN;
    if (!token) throw new UserError("missing-token", "--github-repo needs a token in FERRY_GITHUB_TOKEN");
    reporter = new GitHubDeploymentReporter({
      repository: values["github-repo"],
      environment: values.environment ?? instance,
      token,
      instance,
      ...(values["github-api-url"] ? { baseUrl: values["github-api-url"] } : {}),
    });
  }

  const log = (message: string, fields: Record<string, unknown>) => io.stderr(`${JSON.stringify({ time: io.now().toISOString(), message, ...fields })}\n`);
  const reconciler = createReconciler({
    cluster,
    source,
    settings,
    intervalMs,
    watch: !values.once && !values["dry-run"],
    ...(reporter ? { reporter } : {}),
    log,
    now: io.now,
  });

  if (values.once || values["dry-run"]) {
    const result = await reconciler.cycle();
    await reconciler.stop();
    if (values["dry-run"] && result.plan) io.stdout(formatPlan(result.plan));
    else {
      io.stdout(`revision ${result.revision ?? "(none)"}: ${result.sync}, ${result.health}; applied ${result.applied.length}, pruned ${result.pruned.length}\n`);
      for (const line of describeObjects(result)) io.stdout(`  ${line}\n`);
    }
    for (const error of result.errors) io.stderr(`ferry reconcile: ${error}\n`);
    if (values["dry-run"]) return result.errors.length === 0 ? EXIT.ok : EXIT.invalid;
    return result.ok ? EXIT.ok : EXIT.invalid;
  }

  const server = values.listen ? await startStatusServer(reconciler, parseListenAddress(values.listen)) : undefined;
  if (server) log("status server listening", { url: server.url });
  reconciler.start();
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  await reconciler.stop();
  await server?.close();
  return EXIT.ok;
}
