/**
 * What this Ferry lets a config ask of it. The schema checks shapes; the rules in
 * registry-rules.ts depend on the server (which GitHub it talks to, which variables the operator
 * allows, whether private addresses are refused), so `loadConfig` takes them as a context. The
 * registry client enforces the same rules again at run time (docs/security.md).
 */
export interface ConfigContext {
  /** The container registry of the GitHub Ferry talks to: the one host `auth: github` may name. */
  githubContainerRegistry: string;
}

export const DEFAULT_CONFIG_CONTEXT: ConfigContext = {
  githubContainerRegistry: "ghcr.io",
};

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
  return { githubContainerRegistry: githubContainerRegistry(githubApiBaseUrl(env)) };
}
