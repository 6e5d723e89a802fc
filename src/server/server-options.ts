import { notifyTargetsFromEnv } from "../core/notify/targets.js";
import {
  configContextFromEnv,
  githubApiBaseUrl,
  isRegistryEnvAllowed,
} from "../core/config/config-context.js";
/**
 * `ferry serve`'s settings from the environment it is handed (the CLI is the only place that
 * reads `process.env`).
 */
import { accessSync, constants, readFileSync } from "node:fs";
import { PUBLIC_GOOD_TUF_MIRROR, readTrustedRootFile } from "../adapters/registry/index.js";
import { AZURE_IDENTITY_VARIABLES } from "../core/cloud-registries.js";
import { parseDurationWithin } from "../core/duration.js";
import { UserError } from "../core/errors.js";
import { parseListenAddress } from "../adapters/http/reconciler-status-server.js";
import type { FerryServerOptions } from "./ferry-server.js";
import type { TrustedRootRefreshSettings } from "./trusted-root-refresh.js";

/** Server options from the environment (APP_ID, PRIVATE_KEY[_PATH], WEBHOOK_SECRET, GHE_HOST/GITHUB_API_URL…). */
export function serverOptionsFromEnv(env: NodeJS.ProcessEnv): FerryServerOptions {
  const appId = env.APP_ID;
  const privateKey =
    env.PRIVATE_KEY ?? (env.PRIVATE_KEY_PATH ? readPrivateKey(env.PRIVATE_KEY_PATH) : undefined);
  if (!appId || !privateKey)
    throw new UserError("missing-credentials", "APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) are required");
  const baseUrl = githubApiBaseUrl(env);
  // Which GHCR, which variables, and where each secret may go (secret-bindings.ts).
  const context = configContextFromEnv(env);
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
      identityEnv: cloudIdentityEnv(env),
      configContext: context,
      // A config repo picks its registry hosts: in production, not internal addresses unless allowed.
      refusePrivateRegistries: context.refusePrivateRegistries,
      // The ferry/diff check (docs/diff-check.md): on unless the operator turns it off.
      diffCheck: env.FERRY_DIFF_CHECK !== "off",
      // Notification targets: URLs and keys from the operator, bound to installations (_OWNERS).
      notify: { targets: notifyTargetsFromEnv(env) },
      // An operator setting, never the config repo's: whose Docker credentials Ferry may use.
      ...(env.FERRY_DOCKER_CONFIG ? { dockerConfigPath: env.FERRY_DOCKER_CONFIG } : {}),
      // An operator setting: the Sigstore trusted root keyless signatures chain to; read at start.
      ...(env.FERRY_SIGSTORE_TRUSTED_ROOT
        ? { sigstoreTrustedRoot: trustedRootSetting(env.FERRY_SIGSTORE_TRUSTED_ROOT) }
        : {}),
    },
  };
  if (env.FERRY_SIGSTORE_TRUSTED_ROOT) options.trustedRootSource = env.FERRY_SIGSTORE_TRUSTED_ROOT;
  const tufRefresh = trustedRootRefreshSettings(env);
  if (tufRefresh) options.trustedRootRefresh = tufRefresh;
  if (baseUrl) options.baseUrl = baseUrl;
  if (env.FERRY_SCAN_INTERVAL)
    options.scanIntervalMs =
      env.FERRY_SCAN_INTERVAL === "off"
        ? false
        : parseDurationWithin("FERRY_SCAN_INTERVAL", env.FERRY_SCAN_INTERVAL, SECOND_MS, WEEK_MS);
  const large = wholeNumber(env, "FERRY_LARGE_INSTALLATION_REPOSITORIES", "repositories");
  if (large !== undefined) options.largeInstallationRepositories = large;
  // Behind a reverse proxy every connection comes from the proxy's address.
  const perSource = wholeNumber(env, "FERRY_INTAKE_CONNECTIONS_PER_SOURCE", "connections");
  if (perSource !== undefined) options.intake = { maxConnectionsPerSource: perSource };
  // GitHub Enterprise Server's administrators set their own secondary limits (docs/capacity.md).
  const perMinute = wholeNumber(env, "FERRY_GITHUB_WRITES_PER_MINUTE", "writes");
  const perHour = wholeNumber(env, "FERRY_GITHUB_WRITES_PER_HOUR", "writes");
  if (perMinute !== undefined || perHour !== undefined)
    options.githubWrites = {
      ...(perMinute !== undefined ? { perMinute } : {}),
      ...(perHour !== undefined ? { perHour } : {}),
    };
  const statusListen = env.FERRY_STATUS_LISTEN ? listenAddress(env.FERRY_STATUS_LISTEN) : undefined;
  if (env.FERRY_STATUS_TOKEN || statusListen)
    options.status = {
      ...(env.FERRY_STATUS_TOKEN ? { token: env.FERRY_STATUS_TOKEN } : {}),
      ...(statusListen ? { listen: statusListen } : {}),
    };
  if (env.LOG_LEVEL) options.logLevel = env.LOG_LEVEL as FerryServerOptions["logLevel"];
  return options;
}

/**
 * The environment variables a config repo may name as registry credentials: `FERRY_REGISTRY_*`
 * and those listed in FERRY_REGISTRY_ENV_ALLOW (comma-separated), never the server's or the
 * platform's own secrets. `.github/ferry.yml` is written by whoever controls the config repo, and
 * it also names the registry host: without this allowlist it could send `DATABASE_URL` or the
 * app's private key to a host of its choosing.
 */
export function registryCredentialEnv(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  // isRegistryEnvAllowed leaves out the bindings (`<NAME>_HOSTS`, `<NAME>_OWNERS`): settings, not
  // secrets, they are never redacted from texts nor readable by a config.
  const context = configContextFromEnv(env);
  const result: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env))
    if (isRegistryEnvAllowed(name, context)) result[name] = value;
  return result;
}

function trustedRootSetting(path: string) {
  try {
    return readTrustedRootFile(path);
  } catch (error) {
    throw new UserError("invalid-setting", `FERRY_SIGSTORE_TRUSTED_ROOT: ${(error as Error).message}`);
  }
}

/** Who Ferry is at the clouds, for registry errors: names only, never a secret. */
export function cloudIdentityEnv(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  return Object.fromEntries(AZURE_IDENTITY_VARIABLES.map((name) => [name, env[name]]));
}

/**
 * FERRY_SIGSTORE_TUF_MIRROR (the public-good `https://tuf-repo-cdn.sigstore.dev` or a private
 * Sigstore's TUF repository), FERRY_SIGSTORE_TUF_ROOT (the TUF root.json to start from; the one
 * @sigstore/tuf ships for the public-good mirror), FERRY_SIGSTORE_TUF_REFRESH_INTERVAL (default
 * 24h; `off`: only at start).
 */
function trustedRootRefreshSettings(env: NodeJS.ProcessEnv): TrustedRootRefreshSettings | undefined {
  const mirror = env.FERRY_SIGSTORE_TUF_MIRROR;
  if (!mirror) {
    if (env.FERRY_SIGSTORE_TUF_ROOT || env.FERRY_SIGSTORE_TUF_REFRESH_INTERVAL)
      throw new UserError(
        "invalid-setting",
        "FERRY_SIGSTORE_TUF_ROOT and FERRY_SIGSTORE_TUF_REFRESH_INTERVAL need FERRY_SIGSTORE_TUF_MIRROR",
      );
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(mirror);
  } catch {
    throw new UserError("invalid-setting", "FERRY_SIGSTORE_TUF_MIRROR is not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new UserError("invalid-setting", "FERRY_SIGSTORE_TUF_MIRROR must be an http(s) URL");
  const publicGood = mirror.replace(/\/+$/, "") === PUBLIC_GOOD_TUF_MIRROR;
  if (!publicGood && !env.FERRY_SIGSTORE_TUF_ROOT)
    throw new UserError(
      "invalid-setting",
      "FERRY_SIGSTORE_TUF_ROOT (the TUF root.json to start from) is required for a mirror other than the public-good one",
    );
  const interval = env.FERRY_SIGSTORE_TUF_REFRESH_INTERVAL;
  return {
    mirrorURL: mirror,
    ...(env.FERRY_SIGSTORE_TUF_ROOT ? { rootPath: readableFile(env.FERRY_SIGSTORE_TUF_ROOT) } : {}),
    ...(interval ? { intervalMs: interval === "off" ? false : refreshInterval(interval) } : {}),
  };
}

const SECOND_MS = 1000;
const WEEK_MS = 7 * 24 * 60 * 60 * 1000;

/** Between a minute (a mirror is not polled in a loop) and a week. */
function refreshInterval(text: string): number {
  return parseDurationWithin("FERRY_SIGSTORE_TUF_REFRESH_INTERVAL", text, 60 * SECOND_MS, WEEK_MS);
}

function readableFile(path: string): string {
  try {
    accessSync(path, constants.R_OK);
    return path;
  } catch (error) {
    throw new UserError(
      "invalid-setting",
      `cannot read FERRY_SIGSTORE_TUF_ROOT ${path}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`,
    );
  }
}

function listenAddress(text: string): { host: string; port: number } {
  try {
    return parseListenAddress(text);
  } catch (error) {
    throw new UserError("invalid-setting", `FERRY_STATUS_LISTEN: ${(error as Error).message}`);
  }
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

/** A positive whole-number setting, undefined when unset; anything else is refused in one line. */
function wholeNumber(env: NodeJS.ProcessEnv, name: string, unit: string): number | undefined {
  const text = env[name];
  if (!text) return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new UserError(
      "invalid-setting",
      `${name} must be a whole number of ${unit}, not ${JSON.stringify(text)}`,
    );
  return value;
}
