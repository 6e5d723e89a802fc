import { DOCKER_HUB, registryApiHost } from "../../core/image-ref.js";
import type { SecretRedactor } from "../../core/redact.js";
import { secretUseProblem, type SecretBindings } from "../../core/config/secret-bindings.js";
import { classifyHost } from "../../core/net-address.js";
import { CredentialCache } from "./credential-cache.js";
import { RegistryAuthError, RegistryProtocolError } from "./errors.js";
import { isPrivateHost } from "./hosts.js";
import {
  credentialSource,
  credentialsFor,
  forgetRefused,
  hasCredentials,
  staticBearer,
  type AuthOptions,
  type CredentialContext,
  type Credentials,
} from "./registry-credentials.js";
import type { Exchange, RegistryState, Transport } from "./transport.js";
import { parseWwwAuthenticate, type AuthChallenge } from "./www-authenticate.js";

/**
 * The registry client's authentication: anonymous, Basic and Bearer-challenge auth (the
 * distribution token spec) with a token cache per scope, the credentials of registry-credentials.ts
 * sent only to the registry and its trusted token realm, and one re-authentication on 401
 * (docs/reliability.md row 20).
 */

const DEFAULT_TRUSTED_REALMS: Record<string, string[]> = { [DOCKER_HUB]: ["auth.docker.io"] };
/** Tokens without `expires_in` live 60 s (distribution token spec); renew a little early. */
const TOKEN_DEFAULT_SECONDS = 60;
const TOKEN_EARLY_RENEW_MS = 5_000;

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

/** What the authenticator's steps share: the credential reads' context and the token fetches running. */
interface AuthContext extends CredentialContext {
  /** Token fetches running, per registry and scope: concurrent requests share one. */
  tokenFetches: WeakMap<RegistryState, Map<string, Promise<void>>>;
}

export function createAuthenticator(deps: {
  transport: Transport;
  options: AuthOptions;
  env: Record<string, string | undefined>;
  secretBindings: SecretBindings;
  secrets: SecretRedactor;
  now: () => number;
}): Authenticator {
  const { options, env, secretBindings, secrets, now } = deps;
  const ctx: AuthContext = {
    options,
    env,
    secretBindings,
    secrets,
    now,
    exchange: deps.transport.exchange,
    providerCredentials: new CredentialCache(now),
    identityEnv: options.identityEnv ?? env,
    tokenFetches: new WeakMap(),
  };
  return { request: (...args) => request(ctx, ...args) };
}

function realmTrusted(ctx: AuthContext, state: RegistryState, realm: URL): boolean {
  const { options, secretBindings } = ctx;
  const host = realm.host.toLowerCase();
  const own = [
    registryApiHost(state.registry),
    // The host Ferry actually contacts for this registry (the same one outside tests).
    new URL(state.origin).host,
    ...(DEFAULT_TRUSTED_REALMS[state.registry] ?? []),
  ];
  if (own.some((candidate) => candidate.toLowerCase() === host)) return true;
  if (
    !(options.trustedRealmHosts?.[state.registry] ?? []).some((candidate) => candidate.toLowerCase() === host)
  )
    return false;
  // A realm on another host gets a named secret only when the secret's binding names that host too.
  const secret = state.config?.passwordEnv;
  return secret === undefined || secretUseProblem(secretBindings, { secret, host }) === undefined;
}

/** Fetches a Bearer token from the challenge's realm (distribution token spec). */
async function fetchToken(
  ctx: AuthContext,
  state: RegistryState,
  challenge: AuthChallenge,
  scope: string,
): Promise<void> {
  const { secrets, now, exchange } = ctx;
  const { realm, trusted } = checkedRealm(ctx, state, challenge);
  // Credentials are derived only for a trusted realm: an untrusted one never causes a provider
  // exchange (nor gets its result).
  const credentials = trusted ? await credentialsFor(ctx, state) : undefined;
  const url = new URL(realm);
  if (challenge.params.service) url.searchParams.set("service", challenge.params.service);
  url.searchParams.set("scope", scope);
  const headers: Record<string, string> = { accept: "application/json" };
  if (credentials) headers.authorization = basicHeader(credentials);
  const response = await exchange(state, url, "GET", headers, 1024 * 1024);
  if (response.status === 401 || response.status === 403) {
    if (trusted) forgetRefused(ctx, state, credentials);
    const withheld =
      !trusted && hasCredentials(state)
        ? ` (credentials were withheld from untrusted realm host ${realm.host})`
        : "";
    throw new RegistryAuthError(
      `${state.registry}: token endpoint refused ${credentials ? `the credentials of ${credentialSource(ctx, state)}` : "anonymous access"} (HTTP ${response.status}${tokenErrorText(response.body)})${withheld}`,
    );
  }
  if (response.status !== 200)
    throw new RegistryAuthError(`${state.registry}: token endpoint answered HTTP ${response.status}`);
  const { token, seconds } = grantedToken(state, response.body);
  secrets.add(token);
  state.tokens.set(scope, { token, expiresAt: now() + seconds * 1000 - TOKEN_EARLY_RENEW_MS });
}

/**
 * The challenge's realm, refused when it is not http(s), downgrades https, or points at a private or
 * link-local address the registry itself is not at; `trusted` says whether it may receive credentials.
 */
function checkedRealm(
  ctx: AuthContext,
  state: RegistryState,
  challenge: AuthChallenge,
): { realm: URL; trusted: boolean } {
  const realmText = challenge.params.realm;
  if (!realmText) throw new RegistryAuthError(`${state.registry}: Bearer challenge without a realm`);
  let realm: URL;
  try {
    realm = new URL(realmText);
  } catch {
    throw new RegistryProtocolError("registry-realm-refused", `${state.registry}: token realm is not a URL`);
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
      : realmTrusted(ctx, state, realm);
  if (
    classifyHost(realm.hostname) === "link-local" ||
    (!trusted && isPrivateHost(realm.hostname) && !isPrivateHost(origin.hostname))
  ) {
    throw new RegistryProtocolError(
      "registry-realm-refused",
      `${state.registry}: token realm points at private address ${realm.hostname}`,
    );
  }
  return { realm, trusted };
}

/** The token of a token endpoint's 200 answer and the seconds it lives. */
function grantedToken(state: RegistryState, answer: Buffer): { token: string; seconds: number } {
  let body: { token?: unknown; access_token?: unknown; expires_in?: unknown };
  try {
    body = JSON.parse(answer.toString("utf8"));
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
  const seconds =
    typeof body.expires_in === "number" && body.expires_in > 0 ? body.expires_in : TOKEN_DEFAULT_SECONDS;
  return { token, seconds };
}

function fetchTokenOnce(
  ctx: AuthContext,
  state: RegistryState,
  challenge: AuthChallenge,
  scope: string,
): Promise<void> {
  const { tokenFetches } = ctx;
  let running = tokenFetches.get(state);
  if (!running) tokenFetches.set(state, (running = new Map()));
  const existing = running.get(scope);
  if (existing) return existing;
  const fetching = fetchToken(ctx, state, challenge, scope).finally(() => running.delete(scope));
  running.set(scope, fetching);
  return fetching;
}

async function authorizationFor(
  ctx: AuthContext,
  state: RegistryState,
  scope: string,
): Promise<{ headers: Record<string, string>; used?: Credentials }> {
  const { now } = ctx;
  const bearer = staticBearer(ctx, state);
  if (bearer) return { headers: { authorization: `Bearer ${bearer}` } };
  const challenge = state.challenge;
  if (challenge?.scheme === "bearer") {
    let cached = state.tokens.get(scope);
    if (!cached || cached.expiresAt <= now()) {
      await fetchTokenOnce(ctx, state, challenge, scope);
      cached = state.tokens.get(scope);
    }
    return { headers: cached ? { authorization: `Bearer ${cached.token}` } : {} };
  }
  if (challenge?.scheme === "basic") {
    const credentials = await credentialsFor(ctx, state);
    return credentials
      ? { headers: { authorization: basicHeader(credentials) }, used: credentials }
      : { headers: {} };
  }
  return { headers: {} };
}

/** A registry request with auth: on 401 re-authenticate once, then fail (docs/reliability.md row 20). */
async function request(
  ctx: AuthContext,
  ...[state, repository, url, method, accept, maxBytes]: Parameters<RegistryRequest>
): Promise<Exchange> {
  const { now, exchange } = ctx;
  const scope = `repository:${repository}:pull`;
  for (let reauthenticated = false; ; reauthenticated = true) {
    const authorization = await authorizationFor(ctx, state, scope);
    const headers = { accept, ...authorization.headers };
    const response = await exchange(state, url, method, headers, maxBytes);
    if (response.status !== 401) return response;
    forgetRefused(ctx, state, authorization.used);
    const challenges = parseWwwAuthenticate(response.headers.get("www-authenticate"));
    const challenge =
      challenges.find((c) => c.scheme === "bearer") ?? challenges.find((c) => c.scheme === "basic");
    if (reauthenticated || !challenge || state.config?.tokenEnv !== undefined) {
      throw new RegistryAuthError(
        `${state.registry}: unauthorized for ${repository}${reauthenticated ? ` after re-authenticating with ${credentialSource(ctx, state)}` : ""}${challenge ? "" : " (no usable WWW-Authenticate challenge)"}${registryErrorCode(response.body)}`,
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
    if (challenge.scheme === "bearer") await fetchTokenOnce(ctx, state, challenge, scope);
    else if (!(await credentialsFor(ctx, state)))
      throw new RegistryAuthError(
        `${state.registry}: requires credentials for ${repository}; configure registries.${state.registry}`,
      );
  }
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
