/**
 * What this Ferry lets a config ask of it. The schema checks shapes; the rules in
 * registry-rules.ts depend on the server (which GitHub it talks to, which variables the operator
 * allows, whether private addresses are refused), so `loadConfig` takes them as a context. The
 * registry client enforces the same rules again at run time (docs/security.md).
 */
import {
  isSecretBindingName,
  NO_SECRET_BINDINGS,
  secretBindingsFromEnv,
  type SecretBindings,
} from "./secret-bindings.js";
import type { NotifyTargets } from "../notify/targets.js";

export interface ConfigContext {
  /** The container registry of the GitHub Ferry talks to: the one host `auth: github` may name. */
  githubContainerRegistry: string;
  /** Variables besides `FERRY_REGISTRY_*` that `passwordEnv`/`tokenEnv` may name (FERRY_REGISTRY_ENV_ALLOW). */
  allowedEnv: readonly string[];
  /** Registries at loopback or private addresses are refused (production); link-local always are. */
  refusePrivateRegistries: boolean;
  /** Where each secret a config may name may be sent, and for which installations (secret-bindings.ts). */
  secretBindings: SecretBindings;
  /**
   * The installation (account login) whose config this is, in `ferry serve`; undefined in the CLI,
   * which has none: then only the hosts of a secret's binding apply.
   */
  installationOwner?: string;
  /** The operator's notification targets (`ferry serve`): a `notify:` naming another's is warned about. */
  notifyTargets?: NotifyTargets;
}

export const DEFAULT_CONFIG_CONTEXT: ConfigContext = {
  githubContainerRegistry: "ghcr.io",
  allowedEnv: [],
  refusePrivateRegistries: false,
  secretBindings: NO_SECRET_BINDINGS,
};

/** The prefix of the variables a config may name as registry credentials without the operator listing them. */
export const REGISTRY_ENV_PREFIX = "FERRY_REGISTRY_";

/**
 * Ferry's own secrets and the platform's: never readable through `passwordEnv`/`tokenEnv`, not
 * even when the operator lists them (the config repo also chooses where credentials are sent).
 */
const SERVER_SECRET_NAMES =
  /^(APP_ID|PRIVATE_KEY|PRIVATE_KEY_PATH|WEBHOOK_SECRET|WEBHOOK_PROXY_URL|CLIENT_ID|CLIENT_SECRET|GITHUB_.*|GH_.*|GHE_.*|FERRY_REGISTRY_WEBHOOK_.*|FERRY_REGISTRY_ENV_ALLOW|FERRY_GITHUB_TOKEN|FERRY_STATUS_TOKEN|FERRY_GIT_TOKEN|KUBERNETES_.*|NODE_.*|NPM_.*|npm_.*|AWS_.*|GOOGLE_.*|AZURE_.*)$/;

export function isServerSecretName(name: string): boolean {
  return SERVER_SECRET_NAMES.test(name);
}

/**
 * Whether a config may read variable `name` as a registry credential: an allowlist, so that
 * `DATABASE_URL` or another tenant's password is out of reach unless the operator names it.
 */
export function isRegistryEnvAllowed(name: string, context: Pick<ConfigContext, "allowedEnv">): boolean {
  if (isServerSecretName(name) || isSecretBindingName(name)) return false;
  return name.startsWith(REGISTRY_ENV_PREFIX) || context.allowedEnv.includes(name);
}

/**
 * The container registry of the GitHub at `apiBaseUrl`: `ghcr.io` for github.com, and
 * `containers.<host>` for GitHub Enterprise Server (which serves its Container registry only with
 * subdomain isolation) and for GHE.com (`api.<tenant>.ghe.com` → `containers.<tenant>.ghe.com`).
 * See https://docs.github.com/en/enterprise-server@latest/packages/working-with-a-github-packages-registry/working-with-the-container-registry
 */
export function githubContainerRegistry(apiBaseUrl: string | undefined): string {
  if (!apiBaseUrl) return "ghcr.io";
  let host: string;
  try {
    host = new URL(apiBaseUrl).hostname.toLowerCase();
  } catch {
    return "ghcr.io";
  }
  if (host === "api.github.com" || host === "github.com") return "ghcr.io";
  return `containers.${host.replace(/^api\./, "")}`;
}

/**
 * The GitHub API base URL a server started with `env` talks to (GITHUB_API_URL, or GHE_HOST with
 * GHE_PROTOCOL), undefined for github.com. `env` is handed in by an entry point.
 */
export function githubApiBaseUrl(env: Record<string, string | undefined>): string | undefined {
  return (
    env.GITHUB_API_URL ??
    (env.GHE_HOST ? `${env.GHE_PROTOCOL ?? "https"}://${env.GHE_HOST}/api/v3` : undefined)
  );
}

/** The context of a server started with `env`; `ferry check` applies the same. */
export function configContextFromEnv(env: Record<string, string | undefined>): ConfigContext {
  const allowedEnv = (env.FERRY_REGISTRY_ENV_ALLOW ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  return {
    githubContainerRegistry: githubContainerRegistry(githubApiBaseUrl(env)),
    allowedEnv,
    refusePrivateRegistries: env.NODE_ENV === "production" && env.FERRY_ALLOW_PRIVATE_REGISTRIES !== "true",
    secretBindings: secretBindingsFromEnv(env, (name) => isRegistryEnvAllowed(name, { allowedEnv })),
  };
}
