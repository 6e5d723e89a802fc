import { DOCKER_HUB, isLoopbackRegistry, registryApiHost } from "../../core/image-ref.js";
import type { SecretRedactor } from "../../core/redact.js";
import { secretUseProblem, type SecretBindings } from "../../core/config/secret-bindings.js";
import { classifyHost } from "../../core/net-address.js";
import { azureIdentity, fetchAzureCredentials } from "./azure-credentials.js";
import { CredentialCache, type ExpiringCredentials } from "./credential-cache.js";
import { dockerConfigIdentity, fetchDockerConfigCredentials } from "./docker-config-credentials.js";
import { ecrIdentity, fetchEcrCredentials } from "./ecr-credentials.js";
import { fetchGcpCredentials, GCP_IDENTITY } from "./gcp-credentials.js";
import { RegistryAuthError, RegistryProtocolError } from "./errors.js";
import { isPrivateHost } from "./hosts.js";
import type { RegistryClientOptions } from "./registry-client-options.js";
import type { Exchange, RegistryState, Transport } from "./transport.js";
import { parseWwwAuthenticate, type AuthChallenge } from "./www-authenticate.js";

/**
 * The registry client's authentication: anonymous, Basic and Bearer-challenge auth (the
 * distribution token spec) with a token cache per scope, credentials from the config's
 * `registries:` (FERRY_REGISTRY_* variables, the installation token for the GitHub's own
 * registry only, or a provider: ECR, Google, the operator's Docker config.json, each cached per
 * registry in credential-cache.ts), sent only to the registry and its trusted token realm, and one
 * re-authentication on 401 (docs/reliability.md row 20).
 */

const DEFAULT_TRUSTED_REALMS: Record<string, string[]> = { [DOCKER_HUB]: ["auth.docker.io"] };
/** Tokens without `expires_in` live 60 s (distribution token spec); renew a little early. */
const TOKEN_DEFAULT_SECONDS = 60;
const TOKEN_EARLY_RENEW_MS = 5_000;

interface Credentials {
  username: string;
  password: string;
  /** Set for credentials derived from a cloud provider (cached, forgotten when refused). */
  expiresAt?: number;
}

/** A registry request for `repository`, asking for `accept`, reading at most `maxBytes` of the body. */
export type RegistryRequest = (
  state: RegistryState,
  repository: string,
  url: URL,
  method: string,
  accept: string,
  maxBytes: number,
) => Promise<Exchange>;

export interface Authenticator {
  /** A registry request with auth: on 401 re-authenticate once, then fail. */
  request: RegistryRequest;
}

export function createAuthenticator(deps: {
  transport: Transport;
  options: Pick<
    RegistryClientOptions,
    | "githubToken"
    | "githubTokenHost"
    | "trustedRealmHosts"
    | "ecrEndpoint"
    | "azureAuthorityCa"
    | "identityEnv"
    | "dockerConfigPath"
    | "secretOwner"
  >;
  env: Record<string, string | undefined>;
  secretBindings: SecretBindings;
  secrets: SecretRedactor;
  now: () => number;
}): Authenticator {
  const { options, env, secrets, now } = deps;
  const exchange = deps.transport.exchange;
  const providerCredentials = new CredentialCache(now);
  const identityEnv = options.identityEnv ?? env;

  /**
   * `auth: aws | gcp | azure` (the provider's SDK) and `auth: dockerconfig` (config.json, credential helpers):
   * fetched once per registry until shortly before expiry.
   */
  function cloudCredentials(state: RegistryState): Promise<ExpiringCredentials> {
    const roleArn = state.config?.roleArn;
    const provider = state.config?.auth;
    return providerCredentials.get(state.registry, async () => {
      const credentials =
        provider === "dockerconfig"
          ? await fetchDockerConfigCredentials(state.registry, options.dockerConfigPath, { now })
          : provider === "gcp"
            ? await fetchGcpCredentials(state.registry, { now })
            : provider === "azure"
              ? await fetchAzureCredentials(state.registry, {
                  now,
                  origin: state.origin,
                  exchange: (url, headers, body, maxBytes) =>
                    exchange(state, url, "POST", headers, maxBytes, body),
                  identityEnv,
                  ...(options.azureAuthorityCa ? { authorityCa: options.azureAuthorityCa } : {}),
                })
              : await fetchEcrCredentials(state.registry, roleArn, {
                  now,
                  ...(options.ecrEndpoint ? { endpoint: options.ecrEndpoint } : {}),
                });
      secrets.add(credentials.password);
      return credentials;
    });
  }

  /** Who the credentials of `state` come from, for a one-line error without a secret. */
  function credentialSource(state: RegistryState): string {
    const config = state.config;
    if (config?.auth === "aws") return `auth: aws as ${ecrIdentity(config.roleArn)}`;
    if (config?.auth === "dockerconfig") return dockerConfigIdentity(options.dockerConfigPath);
    if (config?.auth === "gcp") return `auth: gcp as ${GCP_IDENTITY}`;
    if (config?.auth === "azure") return `auth: azure as ${azureIdentity(identityEnv)}`;
    if (config?.auth === "github") return "auth: github (the installation token)";
    if (config?.passwordEnv) return `user ${config.username ?? ""} with ${config.passwordEnv}`;
    return "anonymous access";
  }

  /** The registry refused provider credentials: the next request (or cycle) fetches new ones. */
  function forgetRefused(state: RegistryState, credentials: Credentials | undefined): void {
    if (credentials?.expiresAt !== undefined)
      providerCredentials.forget(state.registry, credentials as ExpiringCredentials);
  }

  async function credentialsFor(state: RegistryState): Promise<Credentials | undefined> {
    const config = state.config;
    if (!config || config.auth === "none") return undefined;
    if (
      config.auth === "aws" ||
      config.auth === "gcp" ||
      config.auth === "azure" ||
      config.auth === "dockerconfig"
    )
      return cloudCredentials(state);
    if (config.auth === "github") {
      refuseForeignTokenHost(state);
      if (!options.githubToken)
        throw new RegistryAuthError(
          `${state.registry}: auth: github needs the GitHub App installation token, which is not available here`,
        );
      const password = await options.githubToken();
      secrets.add(password);
      return { username: "x-access-token", password };
    }
    if (config.username !== undefined && config.passwordEnv !== undefined) {
      refuseUnboundSecret(state, config.passwordEnv);
      const password = env[config.passwordEnv];
      if (password === undefined || password === "") {
        throw new RegistryAuthError(
          `${state.registry}: environment variable ${config.passwordEnv} (registries.${state.registry}.passwordEnv) is not set`,
        );
      }
      secrets.add(password);
      return { username: config.username, password };
    }
    return undefined;
  }

  /** Whether the config gives `state`'s registry credentials of any kind. */
  function hasCredentials(state: RegistryState): boolean {
    const config = state.config;
    if (!config || config.auth === "none") return false;
    return (
      config.auth !== undefined ||
      (config.username !== undefined && config.passwordEnv !== undefined) ||
      config.tokenEnv !== undefined
    );
  }

  /** Defence in depth behind the config check: the installation token never leaves its registry. */
  function refuseForeignTokenHost(state: RegistryState): void {
    const allowed = (options.githubTokenHost ?? "ghcr.io").toLowerCase();
    const origin = new URL(state.origin);
    // Plain HTTP only on loopback (the sandbox's registry), which production refuses anyway.
    const plainAllowed = isLoopbackRegistry(state.registry);
    if (origin.host.toLowerCase() !== allowed || (origin.protocol !== "https:" && !plainAllowed))
      throw new RegistryAuthError(
        `${state.registry}: auth: github is allowed only for https://${allowed}; the installation token is not sent to ${origin.host}`,
      );
  }

  /**
   * Defence in depth behind the config rules: a variable is read only for a registry (and an
   * installation) its operator binding names (secret-bindings.ts), so it reaches no other host.
   */
  function refuseUnboundSecret(state: RegistryState, name: string): void {
    const problem = secretUseProblem(deps.secretBindings, {
      secret: name,
      host: state.registry,
      ...(options.secretOwner !== undefined ? { owner: options.secretOwner } : {}),
    });
    if (problem) throw new RegistryAuthError(`${state.registry}: ${problem}`);
  }

  function staticBearer(state: RegistryState): string | undefined {
    const name = state.config?.tokenEnv;
    if (name === undefined) return undefined;
    refuseUnboundSecret(state, name);
    const token = env[name];
    if (token === undefined || token === "")
      throw new RegistryAuthError(
        `${state.registry}: environment variable ${name} (registries.${state.registry}.tokenEnv) is not set`,
      );
    secrets.add(token);
    return token;
  }

  function realmTrusted(state: RegistryState, realm: URL): boolean {
    const host = realm.host.toLowerCase();
    const own = [
      registryApiHost(state.registry),
      // The host Ferry actually contacts for this registry (the same one outside tests).
      new URL(state.origin).host,
      ...(DEFAULT_TRUSTED_REALMS[state.registry] ?? []),
    ];
    if (own.some((candidate) => candidate.toLowerCase() === host)) return true;
    if (
      !(options.trustedRealmHosts?.[state.registry] ?? []).some(
        (candidate) => candidate.toLowerCase() === host,
      )
    )
      return false;
    // A realm on another host gets a named secret only when the secret's binding names that host too.
    const secret = state.config?.passwordEnv;
    return secret === undefined || secretUseProblem(deps.secretBindings, { secret, host }) === undefined;
  }

  /** Fetches a Bearer token from the challenge's realm (distribution token spec). */
  async function fetchToken(state: RegistryState, challenge: AuthChallenge, scope: string): Promise<void> {
    const realmText = challenge.params.realm;
    if (!realmText) throw new RegistryAuthError(`${state.registry}: Bearer challenge without a realm`);
    let realm: URL;
    try {
      realm = new URL(realmText);
    } catch {
      throw new RegistryProtocolError(
        "registry-realm-refused",
        `${state.registry}: token realm is not a URL`,
      );
    }
    const origin = new URL(state.origin);
    if (realm.protocol !== "https:" && realm.protocol !== "http:")
      throw new RegistryProtocolError(
        "registry-realm-refused",
        `${state.registry}: token realm must be http(s)`,
      );
    if (origin.protocol === "https:" && realm.protocol === "http:")
      throw new RegistryProtocolError(
        "registry-realm-refused",
        `${state.registry}: token realm ${realm.host} downgrades https to plain http`,
      );
    // The installation token goes to the GitHub registry's own realm only, never to a host an
    // operator trusts for other credentials.
    const trusted =
      state.config?.auth === "github"
        ? realm.host.toLowerCase() === registryApiHost(state.registry).toLowerCase() &&
          realm.protocol === origin.protocol
        : realmTrusted(state, realm);
    if (
      classifyHost(realm.hostname) === "link-local" ||
      (!trusted && isPrivateHost(realm.hostname) && !isPrivateHost(origin.hostname))
    ) {
      throw new RegistryProtocolError(
        "registry-realm-refused",
        `${state.registry}: token realm points at private address ${realm.hostname}`,
      );
    }
    // Credentials are derived only for a trusted realm: an untrusted one never causes a provider
    // exchange (nor gets its result).
    const credentials = trusted ? await credentialsFor(state) : undefined;
    const url = new URL(realm);
    if (challenge.params.service) url.searchParams.set("service", challenge.params.service);
    url.searchParams.set("scope", scope);
    const headers: Record<string, string> = { accept: "application/json" };
    if (credentials) headers.authorization = basicHeader(credentials);
    const response = await exchange(state, url, "GET", headers, 1024 * 1024);
    if (response.status === 401 || response.status === 403) {
      if (trusted) forgetRefused(state, credentials);
      const withheld =
        !trusted && hasCredentials(state)
          ? ` (credentials were withheld from untrusted realm host ${realm.host})`
          : "";
      throw new RegistryAuthError(
        `${state.registry}: token endpoint refused ${credentials ? `the credentials of ${credentialSource(state)}` : "anonymous access"} (HTTP ${response.status}${tokenErrorText(response.body)})${withheld}`,
      );
    }
    if (response.status !== 200)
      throw new RegistryAuthError(`${state.registry}: token endpoint answered HTTP ${response.status}`);
    let body: { token?: unknown; access_token?: unknown; expires_in?: unknown };
    try {
      body = JSON.parse(response.body.toString("utf8"));
    } catch {
      throw new RegistryProtocolError(
        "registry-bad-token",
        `${state.registry}: token endpoint answered malformed JSON`,
      );
    }
    const token =
      typeof body.token === "string" && body.token
        ? body.token
        : typeof body.access_token === "string"
          ? body.access_token
          : "";
    if (!token)
      throw new RegistryProtocolError(
        "registry-bad-token",
        `${state.registry}: token endpoint answered no token`,
      );
    secrets.add(token);
    const seconds =
      typeof body.expires_in === "number" && body.expires_in > 0 ? body.expires_in : TOKEN_DEFAULT_SECONDS;
    state.tokens.set(scope, { token, expiresAt: now() + seconds * 1000 - TOKEN_EARLY_RENEW_MS });
  }

  /** Token fetches running, per registry and scope: concurrent requests share one. */
  const tokenFetches = new WeakMap<RegistryState, Map<string, Promise<void>>>();

  function fetchTokenOnce(state: RegistryState, challenge: AuthChallenge, scope: string): Promise<void> {
    let running = tokenFetches.get(state);
    if (!running) tokenFetches.set(state, (running = new Map()));
    const existing = running.get(scope);
    if (existing) return existing;
    const fetching = fetchToken(state, challenge, scope).finally(() => running.delete(scope));
    running.set(scope, fetching);
    return fetching;
  }

  async function authorizationFor(
    state: RegistryState,
    scope: string,
  ): Promise<{ headers: Record<string, string>; used?: Credentials }> {
    const bearer = staticBearer(state);
    if (bearer) return { headers: { authorization: `Bearer ${bearer}` } };
    const challenge = state.challenge;
    if (challenge?.scheme === "bearer") {
      let cached = state.tokens.get(scope);
      if (!cached || cached.expiresAt <= now()) {
        await fetchTokenOnce(state, challenge, scope);
        cached = state.tokens.get(scope);
      }
      return { headers: cached ? { authorization: `Bearer ${cached.token}` } : {} };
    }
    if (challenge?.scheme === "basic") {
      const credentials = await credentialsFor(state);
      return credentials
        ? { headers: { authorization: basicHeader(credentials) }, used: credentials }
        : { headers: {} };
    }
    return { headers: {} };
  }

  /** A registry request with auth: on 401 re-authenticate once, then fail (docs/reliability.md row 20). */
  const request: RegistryRequest = async (state, repository, url, method, accept, maxBytes) => {
    const scope = `repository:${repository}:pull`;
    for (let reauthenticated = false; ; reauthenticated = true) {
      const authorization = await authorizationFor(state, scope);
      const headers = { accept, ...authorization.headers };
      const response = await exchange(state, url, method, headers, maxBytes);
      if (response.status !== 401) return response;
      forgetRefused(state, authorization.used);
      const challenges = parseWwwAuthenticate(response.headers.get("www-authenticate"));
      const challenge =
        challenges.find((c) => c.scheme === "bearer") ?? challenges.find((c) => c.scheme === "basic");
      if (reauthenticated || !challenge || state.config?.tokenEnv !== undefined) {
        throw new RegistryAuthError(
          `${state.registry}: unauthorized for ${repository}${reauthenticated ? ` after re-authenticating with ${credentialSource(state)}` : ""}${challenge ? "" : " (no usable WWW-Authenticate challenge)"}${registryErrorCode(response.body)}`,
        );
      }
      state.challenge = challenge;
      // Requests sent together before any token existed are all refused: the first to come back
      // fetches the token, and the others use it rather than drop it and fetch another.
      const current = state.tokens.get(scope);
      const sent = (authorization.headers as { authorization?: string }).authorization;
      if (
        challenge.scheme === "bearer" &&
        current &&
        current.expiresAt > now() &&
        sent !== `Bearer ${current.token}`
      )
        continue;
      state.tokens.delete(scope);
      if (challenge.scheme === "bearer") await fetchTokenOnce(state, challenge, scope);
      else if (!(await credentialsFor(state)))
        throw new RegistryAuthError(
          `${state.registry}: requires credentials for ${repository}; configure registries.${state.registry}`,
        );
    }
  };

  return { request };
}

/**
 * What a token endpoint said, as a code: the distribution error code, or an OAuth 2.0 `error`
 * (RFC 6749 section 5.2), never its free text, which may echo what it refused.
 */
function tokenErrorText(body: Buffer): string {
  const code = registryErrorCode(body);
  if (code) return `, ${code.replace("; the registry said ", "")}`;
  try {
    const error = (JSON.parse(body.subarray(0, 64 * 1024).toString("utf8")) as { error?: unknown }).error;
    return typeof error === "string" && /^[a-z_]{1,40}$/.test(error) ? `, ${error}` : "";
  } catch {
    return "";
  }
}

function basicHeader(credentials: Credentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`;
}

/** The distribution error code of a refusal (`UNAUTHORIZED`, `DENIED`), never the registry's own message. */
function registryErrorCode(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.subarray(0, 64 * 1024).toString("utf8")) as {
      errors?: { code?: unknown }[];
    };
    const code = parsed.errors?.[0]?.code;
    return typeof code === "string" && /^[A-Z_]{1,40}$/.test(code) ? `; the registry said ${code}` : "";
  } catch {
    return "";
  }
}
