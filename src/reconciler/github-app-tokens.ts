/**
 * The reconciler's GitHub credentials (docs/config.md "CLI", README "The reconciler"): a static
 * token (`FERRY_GITHUB_TOKEN`, e.g. a fine-grained token with Deployments write), or installation
 * tokens minted from a GitHub App's id and private key. An installation token lives one hour
 * (`expires_at` of `POST /app/installations/{id}/access_tokens`,
 * https://docs.github.com/en/rest/apps/apps#create-an-installation-access-token-for-an-app); a new
 * one is minted five minutes before that, and at once when GitHub answers 401 "Bad credentials" to
 * the current one (revoked early). The JWT and the token request are @octokit/auth-app's.
 */
import { createAppAuth } from "@octokit/auth-app";
import { Octokit } from "@octokit/rest";

/** Where a request's token comes from. */
export interface TokenSource {
  token(): Promise<string>;
  /** GitHub refused `token` (401): the next `token()` mints a new one. */
  refused?(token: string): void;
}

export interface GitHubAppCredentials {
  appId: string;
  /** The App's private key, PEM. */
  privateKey: string;
  /** Found from the repository (`GET /repos/{o}/{r}/installation`) when absent. */
  installationId?: number;
}

/** How long before `expires_at` a token is replaced. */
export const RENEW_BEFORE_MS = 5 * 60 * 1000;

export function staticToken(token: string): TokenSource {
  return { token: () => Promise.resolve(token) };
}

export class InstallationTokens implements TokenSource {
  private current: { token: string; expiresAtMs: number } | undefined;
  private minting: Promise<string> | undefined;
  private installationId: number | undefined;
  private readonly auth: ReturnType<typeof createAppAuth>;
  private readonly octokit: Octokit;

  constructor(
    private readonly options: {
      credentials: GitHubAppCredentials;
      /** `owner/repo`: the installation is the one on this repository. */
      repository: string;
      baseUrl?: string;
      now: () => Date;
    },
  ) {
    this.octokit = new Octokit({
      ...(options.baseUrl ? { baseUrl: options.baseUrl.replace(/\/+$/, "") } : {}),
      userAgent: "ferry-reconciler",
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
    this.installationId = options.credentials.installationId;
    this.auth = createAppAuth({
      appId: options.credentials.appId,
      privateKey: options.credentials.privateKey,
      request: this.octokit.request,
    });
  }

  token(): Promise<string> {
    const current = this.current;
    if (current && this.options.now().getTime() < current.expiresAtMs - RENEW_BEFORE_MS)
      return Promise.resolve(current.token);
    this.minting ??= this.mint().finally(() => {
      this.minting = undefined;
    });
    return this.minting;
  }

  refused(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  private async mint(): Promise<string> {
    const installationId = this.installationId ?? (await this.findInstallation());
    this.installationId = installationId;
    // `refresh`: never auth-app's own cache (kept by age alone): this class decides by expires_at.
    const minted = await this.auth({ type: "installation", installationId, refresh: true });
    this.current = { token: minted.token, expiresAtMs: Date.parse(minted.expiresAt) };
    return minted.token;
  }

  private async findInstallation(): Promise<number> {
    const [owner, repo] = this.options.repository.split("/") as [string, string];
    const { token: jwt } = await this.auth({ type: "app" });
    const { data } = await this.octokit.rest.apps.getRepoInstallation({
      owner,
      repo,
      headers: { authorization: `bearer ${jwt}` },
    });
    return data.id;
  }
}

/**
 * Sends each request of `octokit` with a token of `source`; a 401 hands the token back and the
 * request is tried once more with a new one.
 */
export function authenticateWith(octokit: Octokit, source: TokenSource): void {
  octokit.hook.wrap("request", async (request, options) => {
    const first = await source.token();
    options.headers.authorization = `token ${first}`;
    try {
      return await request(options);
    } catch (error) {
      if ((error as { status?: unknown }).status !== 401 || !source.refused) throw error;
      source.refused(first);
      options.headers.authorization = `token ${await source.token()}`;
      return request(options);
    }
  });
}
