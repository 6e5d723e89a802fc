/**
 * `ferry serve`'s settings from the environment it is handed (the CLI is the only place that
 * reads `process.env`).
 */
import { readFileSync } from "node:fs";
import { parseDuration } from "../core/duration.js";
import { UserError } from "../core/errors.js";
import { parseListenAddress } from "../reconciler/status-server.js";
import type { FerryServerOptions } from "./ferry-server.js";

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
  const statusListen = env.FERRY_STATUS_LISTEN ? listenAddress(env.FERRY_STATUS_LISTEN) : undefined;
  if (env.FERRY_STATUS_TOKEN || statusListen)
    options.status = {
      ...(env.FERRY_STATUS_TOKEN ? { token: env.FERRY_STATUS_TOKEN } : {}),
      ...(statusListen ? { listen: statusListen } : {}),
    };
  if (env.LOG_LEVEL) options.logLevel = env.LOG_LEVEL as FerryServerOptions["logLevel"];
  return options;
}

/** Ferry's own secrets and the platform's: never readable through a config's `passwordEnv`/`tokenEnv`. */
const SERVER_SECRET_NAMES =
  /^(APP_ID|PRIVATE_KEY|PRIVATE_KEY_PATH|WEBHOOK_SECRET|WEBHOOK_PROXY_URL|CLIENT_ID|CLIENT_SECRET|GITHUB_.*|GH_.*|GHE_.*|FERRY_REGISTRY_WEBHOOK_.*|FERRY_GITHUB_TOKEN|FERRY_STATUS_TOKEN|KUBERNETES_.*|NODE_.*|NPM_.*|npm_.*|AWS_.*|GOOGLE_.*|AZURE_.*)$/;

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
