import { createHash } from "node:crypto";
import type { ImageDescription, RegistryReader } from "../../app/ports.js";
import type { FerryConfig, RegistryConfig } from "../../core/config/schema.js";
import { FerryError } from "../../core/errors.js";
import {
  DOCKER_HUB,
  imageName,
  isLoopbackRegistry,
  isValidDigest,
  isValidTag,
  parseImageName,
  registryApiHost,
} from "../../core/image-ref.js";
import {
  RegistryAuthError,
  RegistryNotFoundError,
  RegistryProtocolError,
  RegistryUnavailableError,
} from "./errors.js";
import { isPrivateHost } from "./hosts.js";
import { Circuit, RequestBudget, Semaphore } from "./limits.js";
import { nextLink } from "./link-header.js";
import { bareMediaType, isIndexMediaType, MANIFEST_ACCEPT, MANIFEST_MEDIA_TYPES } from "./media-types.js";
import { retryAfterMs } from "./rate-limit.js";
import { parseWwwAuthenticate, type AuthChallenge } from "./www-authenticate.js";

/**
 * An OCI distribution client over Node's fetch: anonymous, Basic and Bearer-challenge
 * auth with a token cache per scope, paginated tag lists with loop/size/time caps, manifests
 * verified against a locally computed sha256, per-registry backoff circuit, request budget and
 * concurrency limit, and a tag-list cache shared by every environment watching a repository.
 */

export interface RegistryLimits {
  /** More tags than this is an error, never a truncated list (docs/reliability.md row 18). */
  maxTags: number;
  maxPages: number;
  /** Wall-clock cap on one tag walk. */
  listTimeoutMs: number;
  /** `n` sent on tags/list. */
  pageSize: number;
  maxManifestBytes: number;
  maxConfigBytes: number;
  maxTagPageBytes: number;
  requestTimeoutMs: number;
  /** Retries after a 5xx, network error or timeout (so maxRetries + 1 attempts). */
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  maxRedirects: number;
  /** Default budget when `registries.<host>.requestsPerMinute` is not set. */
  requestsPerMinute: number;
  /** Waiting for the budget longer than this fails with a TransientError instead. */
  maxBudgetWaitMs: number;
  /** Default when `registries.<host>.concurrency` is not set. */
  concurrency: number;
  /** Back-off after a 429 that names no time. */
  defaultBackoffMs: number;
  /** How long a tag list is reused; 0 disables the shared cache. */
  tagCacheTtlMs: number;
}

export const DEFAULT_REGISTRY_LIMITS: RegistryLimits = {
  maxTags: 200_000,
  maxPages: 5_000,
  listTimeoutMs: 120_000,
  pageSize: 1000,
  maxManifestBytes: 4 * 1024 * 1024,
  maxConfigBytes: 8 * 1024 * 1024,
  maxTagPageBytes: 64 * 1024 * 1024,
  requestTimeoutMs: 30_000,
  maxRetries: 3,
  retryBaseMs: 500,
  retryMaxMs: 10_000,
  maxRedirects: 3,
  requestsPerMinute: 600,
  maxBudgetWaitMs: 10_000,
  concurrency: 8,
  defaultBackoffMs: 60_000,
  tagCacheTtlMs: 60_000,
};

export interface RegistryClientOptions {
  /** `registries:` of `.github/ferry.yml`, keyed by registry host. */
  registries?: FerryConfig["registries"];
  /** Where `passwordEnv` / `tokenEnv` are looked up. */
  env?: Record<string, string | undefined>;
  /** Installation token provider for `auth: github` (GHCR). */
  githubToken?: () => Promise<string>;
  /**
   * Token realm hosts (host[:port]) that may receive a registry's credentials besides the
   * registry's own host, by registry name. Docker Hub's auth.docker.io is trusted by default.
   */
  trustedRealmHosts?: Record<string, string[]>;
  /**
   * Refuse registries at loopback or private addresses (the server sets this in production: a
   * config repo chooses its registry hosts, and must not point Ferry at internal services).
   * Link-local addresses (cloud metadata) are refused always.
   */
  refusePrivateRegistries?: boolean;
  /**
   * How many replicas share each registry's budget and concurrency (the live scan members): each
   * takes its part, so the fleet as a whole stays under `requestsPerMinute` and `concurrency`.
   */
  budgetShare?: () => number;
  fetch?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  limits?: Partial<RegistryLimits>;
}

export interface RegistryClient extends RegistryReader {
  /** Drops the cached tag list of a repository (a webhook said it changed). */
  invalidate(repository: string): void;
  /** HTTP requests sent so far, by registry name (token fetches and redirects included). */
  requestCounts(): Record<string, number>;
  /** Per registry: requests started in the last minute and this replica's share of the budget. */
  budgetUse(): Record<string, { used: number; limit: number }>;
}

/** docs/reliability.md row 16: the registry host itself, before any request is sent. */
function refuseUnsafeRegistry(registry: string, refusePrivate: boolean): void {
  const hostname = new URL(`http://${registryApiHost(registry)}`).hostname.replace(/^\[|\]$/g, "");
  const linkLocal =
    /^169\.254\./.test(hostname) || /^fe[89ab]/i.test(hostname) || hostname === "metadata.google.internal";
  if (linkLocal || (refusePrivate && isPrivateHost(hostname))) {
    throw new RegistryProtocolError(
      "registry-address-refused",
      `${registry}: registries at ${linkLocal ? "link-local" : "private or loopback"} addresses are refused`,
    );
  }
}

const DEFAULT_TRUSTED_REALMS: Record<string, string[]> = { [DOCKER_HUB]: ["auth.docker.io"] };
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Tokens without `expires_in` live 60 s (distribution token spec); renew a little early. */
const TOKEN_DEFAULT_SECONDS = 60;
const TOKEN_EARLY_RENEW_MS = 5_000;

interface Credentials {
  username: string;
  password: string;
}

interface RegistryState {
  registry: string;
  origin: string;
  config: RegistryConfig | undefined;
  circuit: Circuit;
  budget: RequestBudget;
  semaphore: Semaphore;
  requests: number;
  /** The last challenge seen, so later scopes fetch a token before their first request. */
  challenge?: AuthChallenge;
  tokens: Map<string, { token: string; expiresAt: number }>;
}

interface Exchange {
  status: number;
  headers: Headers;
  body: Buffer;
  url: string;
}

interface FetchedManifest {
  digest: string;
  mediaType: string;
  json: Record<string, unknown>;
}

interface ImageConfigBlob {
  created?: string;
  os?: string;
  architecture?: string;
  variant?: string;
  config?: { Labels?: Record<string, string> | null };
}

export function createRegistryClient(options: RegistryClientOptions = {}): RegistryClient {
  const limits: RegistryLimits = { ...DEFAULT_REGISTRY_LIMITS, ...options.limits };
  const fetchImpl = options.fetch ?? fetch;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const env = options.env ?? {};
  const states = new Map<string, RegistryState>();
  const share = (): number => Math.max(1, options.budgetShare?.() ?? 1);
  const tagCache = new Map<string, { expiresAt: number; tags: Promise<string[]> }>();
  // Manifests by digest and config blobs are immutable: cache them for the life of the client.
  const manifestCache = new Map<string, FetchedManifest>();
  const configCache = new Map<string, Promise<ImageConfigBlob>>();
  // Tags seen before: later describes HEAD them (free on Docker Hub) and reuse the cached manifest.
  const tagDigests = new Map<string, string>();
  const secrets = new Set<string>();

  function redact(text: string): string {
    let result = text;
    for (const secret of secrets) if (secret.length >= 4) result = result.split(secret).join("[REDACTED]");
    return result;
  }

  function stateFor(registry: string): RegistryState {
    let state = states.get(registry);
    if (!state) {
      refuseUnsafeRegistry(registry, options.refusePrivateRegistries ?? false);
      const config = options.registries?.[registry] ?? options.registries?.[registryApiHost(registry)];
      const plain = config?.insecure ?? isLoopbackRegistry(registry);
      state = {
        registry,
        origin: `${plain ? "http" : "https"}://${registryApiHost(registry)}`,
        config,
        circuit: new Circuit(),
        budget: new RequestBudget(() => (config?.requestsPerMinute ?? limits.requestsPerMinute) / share()),
        semaphore: new Semaphore(() => (config?.concurrency ?? limits.concurrency) / share()),
        requests: 0,
        tokens: new Map(),
      };
      states.set(registry, state);
    }
    return state;
  }

  async function credentialsFor(state: RegistryState): Promise<Credentials | undefined> {
    const config = state.config;
    if (!config || config.auth === "none") return undefined;
    if (config.auth === "github") {
      if (!options.githubToken)
        throw new RegistryAuthError(
          `${state.registry}: auth: github needs the GitHub App installation token, which is not available here`,
        );
      const password = await options.githubToken();
      secrets.add(password);
      return { username: "x-access-token", password };
    }
    if (config.username !== undefined && config.passwordEnv !== undefined) {
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

  function staticBearer(state: RegistryState): string | undefined {
    const name = state.config?.tokenEnv;
    if (name === undefined) return undefined;
    const token = env[name];
    if (token === undefined || token === "")
      throw new RegistryAuthError(
        `${state.registry}: environment variable ${name} (registries.${state.registry}.tokenEnv) is not set`,
      );
    secrets.add(token);
    return token;
  }

  function backoffDelay(attempt: number): number {
    const ceiling = Math.min(limits.retryMaxMs, limits.retryBaseMs * 2 ** attempt);
    return Math.round(ceiling / 2 + (random() * ceiling) / 2);
  }

  async function takeBudget(state: RegistryState): Promise<void> {
    for (;;) {
      const wait = state.budget.take(now());
      if (wait === 0) return;
      if (wait > limits.maxBudgetWaitMs) {
        throw new RegistryUnavailableError(
          "registry-budget-exhausted",
          state.registry,
          `${state.registry}: request budget of ${state.budget.use(now()).limit}/min used up`,
          { retryAfterMs: wait },
        );
      }
      await sleep(wait);
    }
  }

  /** One request with redirects followed by hand: no https→http downgrade, no credentials to another host. */
  async function fetchFollowingRedirects(
    state: RegistryState,
    url: URL,
    method: string,
    headers: Record<string, string>,
    maxBytes: number,
  ): Promise<Exchange> {
    let current = url;
    let sendHeaders = { ...headers };
    for (let hop = 0; hop <= limits.maxRedirects; hop += 1) {
      state.requests += 1;
      const response = await fetchImpl(current, {
        method,
        headers: sendHeaders,
        redirect: "manual",
        signal: AbortSignal.timeout(limits.requestTimeoutMs),
      });
      const location = response.headers.get("location");
      if (REDIRECTS.has(response.status) && location) {
        await response.body?.cancel();
        const next = new URL(location, current);
        if (next.protocol !== "https:" && next.protocol !== "http:")
          throw new RegistryProtocolError(
            "registry-redirect-refused",
            `${state.registry}: redirect to a ${next.protocol} URL refused`,
          );
        if (current.protocol === "https:" && next.protocol === "http:")
          throw new RegistryProtocolError(
            "registry-redirect-refused",
            `${state.registry}: redirect from https to plain http refused`,
          );
        if (next.host !== current.host) {
          if (isPrivateHost(next.hostname) && !isPrivateHost(current.hostname))
            throw new RegistryProtocolError(
              "registry-redirect-refused",
              `${state.registry}: redirect to private address ${next.hostname} refused`,
            );
          // Blob redirects go to storage hosts (S3, CDN) that must not see registry credentials.
          const { authorization: _dropped, ...rest } = sendHeaders;
          sendHeaders = rest;
        }
        current = next;
        continue;
      }
      return {
        status: response.status,
        headers: response.headers,
        body: method === "HEAD" ? Buffer.alloc(0) : await readCapped(state, response, maxBytes),
        url: current.href,
      };
    }
    throw new RegistryProtocolError(
      "registry-too-many-redirects",
      `${state.registry}: more than ${limits.maxRedirects} redirects`,
    );
  }

  async function readCapped(state: RegistryState, response: Response, maxBytes: number): Promise<Buffer> {
    const okStatus = response.status >= 200 && response.status < 300;
    // Error bodies are only read for their error code: a few KiB is plenty.
    const cap = okStatus ? maxBytes : 4096;
    const declared = Number(response.headers.get("content-length") ?? NaN);
    if (okStatus && Number.isFinite(declared) && declared > cap) {
      await response.body?.cancel();
      throw new RegistryProtocolError(
        "registry-response-too-large",
        `${state.registry}: response of ${declared} bytes exceeds the ${cap}-byte cap`,
      );
    }
    if (!response.body) return Buffer.alloc(0);
    const chunks: Buffer[] = [];
    let size = 0;
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > cap) {
        await reader.cancel();
        if (!okStatus) break;
        throw new RegistryProtocolError(
          "registry-response-too-large",
          `${state.registry}: response exceeds the ${cap}-byte cap`,
        );
      }
      chunks.push(Buffer.from(value));
    }
    return Buffer.concat(chunks);
  }

  /** Bounded retries with jitter for 5xx, network errors and timeouts; a 429 opens the circuit. */
  async function exchange(
    state: RegistryState,
    url: URL,
    method: string,
    headers: Record<string, string>,
    maxBytes: number,
  ): Promise<Exchange> {
    for (let attempt = 0; ; attempt += 1) {
      const open = state.circuit.remaining(now());
      if (open > 0) {
        throw new RegistryUnavailableError(
          "registry-backoff",
          state.registry,
          `${state.registry}: backing off for ${Math.ceil(open / 1000)}s (${state.circuit.lastReason})`,
          { retryAfterMs: open },
        );
      }
      await takeBudget(state);
      let response: Exchange;
      try {
        response = await state.semaphore.run(() =>
          fetchFollowingRedirects(state, url, method, headers, maxBytes),
        );
      } catch (error) {
        if (error instanceof FerryError) throw error;
        const timedOut =
          error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
        if (attempt < limits.maxRetries) {
          await sleep(backoffDelay(attempt));
          continue;
        }
        const what = timedOut ? `timed out after ${limits.requestTimeoutMs}ms` : "unreachable";
        throw new RegistryUnavailableError(
          timedOut ? "registry-timeout" : "registry-unreachable",
          state.registry,
          `${state.registry}: ${what} (${attempt + 1} attempts)`,
          { retryAfterMs: backoffDelay(attempt), cause: error },
        );
      }
      if (response.status === 429) {
        const wait = retryAfterMs(response.headers, now()) ?? limits.defaultBackoffMs;
        state.circuit.open(now() + wait, "rate limited (429)");
        throw new RegistryUnavailableError(
          "registry-rate-limited",
          state.registry,
          `${state.registry}: rate limited (429); retry in ${Math.ceil(wait / 1000)}s`,
          { retryAfterMs: wait },
        );
      }
      if (response.status >= 500) {
        if (attempt < limits.maxRetries) {
          const asked = retryAfterMs(response.headers, now());
          await sleep(Math.min(limits.retryMaxMs, Math.max(backoffDelay(attempt), asked ?? 0)));
          continue;
        }
        throw new RegistryUnavailableError(
          "registry-server-error",
          state.registry,
          `${state.registry}: HTTP ${response.status} after ${attempt + 1} attempts`,
          { retryAfterMs: backoffDelay(attempt) },
        );
      }
      return response;
    }
  }

  function realmTrusted(state: RegistryState, realm: URL): boolean {
    const trusted = [
      registryApiHost(state.registry),
      ...(DEFAULT_TRUSTED_REALMS[state.registry] ?? []),
      ...(options.trustedRealmHosts?.[state.registry] ?? []),
    ];
    return trusted.map((host) => host.toLowerCase()).includes(realm.host.toLowerCase());
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
    const trusted = realmTrusted(state, realm);
    if (!trusted && isPrivateHost(realm.hostname) && !isPrivateHost(origin.hostname)) {
      throw new RegistryProtocolError(
        "registry-realm-refused",
        `${state.registry}: token realm points at private address ${realm.hostname}`,
      );
    }
    const credentials = await credentialsFor(state);
    const url = new URL(realm);
    if (challenge.params.service) url.searchParams.set("service", challenge.params.service);
    url.searchParams.set("scope", scope);
    const headers: Record<string, string> = { accept: "application/json" };
    if (credentials && trusted) headers.authorization = basicHeader(credentials);
    const response = await exchange(state, url, "GET", headers, 1024 * 1024);
    if (response.status === 401 || response.status === 403) {
      const withheld =
        credentials && !trusted ? ` (credentials were withheld from untrusted realm host ${realm.host})` : "";
      throw new RegistryAuthError(
        `${state.registry}: token endpoint refused ${credentials && trusted ? "the credentials" : "anonymous access"} (HTTP ${response.status})${withheld}`,
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

  async function authorizationFor(state: RegistryState, scope: string): Promise<Record<string, string>> {
    const bearer = staticBearer(state);
    if (bearer) return { authorization: `Bearer ${bearer}` };
    const challenge = state.challenge;
    if (challenge?.scheme === "bearer") {
      let cached = state.tokens.get(scope);
      if (!cached || cached.expiresAt <= now()) {
        await fetchToken(state, challenge, scope);
        cached = state.tokens.get(scope);
      }
      return cached ? { authorization: `Bearer ${cached.token}` } : {};
    }
    if (challenge?.scheme === "basic") {
      const credentials = await credentialsFor(state);
      return credentials ? { authorization: basicHeader(credentials) } : {};
    }
    return {};
  }

  /** A registry request with auth: on 401 re-authenticate once, then fail (docs/reliability.md row 20). */
  async function request(
    state: RegistryState,
    repository: string,
    url: URL,
    method: string,
    accept: string,
    maxBytes: number,
  ): Promise<Exchange> {
    const scope = `repository:${repository}:pull`;
    for (let reauthenticated = false; ; reauthenticated = true) {
      const headers = { accept, ...(await authorizationFor(state, scope)) };
      const response = await exchange(state, url, method, headers, maxBytes);
      if (response.status !== 401) return response;
      const challenges = parseWwwAuthenticate(response.headers.get("www-authenticate"));
      const challenge =
        challenges.find((c) => c.scheme === "bearer") ?? challenges.find((c) => c.scheme === "basic");
      if (reauthenticated || !challenge || state.config?.tokenEnv !== undefined) {
        throw new RegistryAuthError(
          `${state.registry}: unauthorized for ${repository}${reauthenticated ? " after re-authenticating" : ""}${challenge ? "" : " (no usable WWW-Authenticate challenge)"}`,
        );
      }
      state.tokens.delete(scope);
      state.challenge = challenge;
      if (challenge.scheme === "bearer") await fetchToken(state, challenge, scope);
      else if (!(await credentialsFor(state)))
        throw new RegistryAuthError(
          `${state.registry}: requires credentials for ${repository}; configure registries.${state.registry}`,
        );
    }
  }

  function failFor(state: RegistryState, repository: string, what: string, response: Exchange): never {
    let detail = "";
    try {
      const parsed = JSON.parse(response.body.toString("utf8")) as {
        errors?: { code?: unknown; message?: unknown }[];
      };
      const first = parsed.errors?.[0];
      if (first) detail = `: ${String(first.code ?? "")} ${String(first.message ?? "")}`.slice(0, 200);
    } catch {
      // not a distribution error body
    }
    const message = redact(
      `${state.registry}/${repository}: ${what} answered HTTP ${response.status}${detail}`,
    );
    if (response.status === 404) throw new RegistryNotFoundError(message);
    if (response.status === 403) throw new RegistryAuthError(message);
    throw new RegistryProtocolError("registry-request-failed", message);
  }

  function target(repository: string): { state: RegistryState; repository: string; name: string } {
    const ref = parseImageName(repository);
    return { state: stateFor(ref.registry), repository: ref.repository, name: imageName(ref) };
  }

  async function walkTags(state: RegistryState, repository: string): Promise<string[]> {
    const started = now();
    const origin = new URL(state.origin);
    let url: URL | undefined = new URL(`${state.origin}/v2/${repository}/tags/list`);
    url.searchParams.set("n", String(limits.pageSize));
    const visited = new Set<string>();
    const tags = new Set<string>();
    let pages = 0;
    while (url) {
      if (visited.has(url.href))
        throw new RegistryProtocolError(
          "registry-pagination-loop",
          `${state.registry}/${repository}: tag list pagination repeats a page`,
        );
      visited.add(url.href);
      pages += 1;
      if (pages > limits.maxPages)
        throw new RegistryProtocolError(
          "registry-too-many-pages",
          `${state.registry}/${repository}: tag list has more than ${limits.maxPages} pages`,
        );
      if (now() - started > limits.listTimeoutMs) {
        throw new RegistryUnavailableError(
          "registry-list-timeout",
          state.registry,
          `${state.registry}/${repository}: listing tags took longer than ${limits.listTimeoutMs}ms`,
          { retryAfterMs: limits.defaultBackoffMs },
        );
      }
      const response = await request(
        state,
        repository,
        url,
        "GET",
        "application/json",
        limits.maxTagPageBytes,
      );
      if (response.status !== 200) failFor(state, repository, "tags/list", response);
      let page: { tags?: unknown };
      try {
        page = JSON.parse(response.body.toString("utf8"));
      } catch {
        throw new RegistryProtocolError(
          "registry-bad-json",
          `${state.registry}/${repository}: tags/list answered malformed JSON`,
        );
      }
      if (page.tags !== null && page.tags !== undefined && !Array.isArray(page.tags)) {
        throw new RegistryProtocolError(
          "registry-bad-json",
          `${state.registry}/${repository}: tags/list has no tags array`,
        );
      }
      for (const tag of (page.tags as unknown[] | null) ?? []) {
        // Names that are not OCI tags can never be written to Git (docs/reliability.md row 14).
        if (typeof tag !== "string" || !isValidTag(tag)) continue;
        tags.add(tag);
        if (tags.size > limits.maxTags) {
          throw new RegistryProtocolError(
            "registry-too-many-tags",
            `${state.registry}/${repository}: more than ${limits.maxTags} tags; refusing to choose from a partial list`,
          );
        }
      }
      url = nextLink(response.headers.get("link"), response.url);
      if (url && url.origin !== origin.origin) {
        throw new RegistryProtocolError(
          "registry-link-refused",
          `${state.registry}/${repository}: next page link points at another origin (${url.host})`,
        );
      }
    }
    return [...tags];
  }

  function verifyDigest(
    state: RegistryState,
    repository: string,
    reference: string,
    body: Buffer,
    announced: string | null,
  ): string {
    const digest = `sha256:${createHash("sha256").update(body).digest("hex")}`;
    if (announced && announced !== digest) {
      throw new RegistryProtocolError(
        "registry-digest-mismatch",
        `${state.registry}/${repository}:${reference}: Docker-Content-Digest ${announced} does not match the body (${digest})`,
      );
    }
    if (reference.startsWith("sha256:") && reference !== digest) {
      throw new RegistryProtocolError(
        "registry-digest-mismatch",
        `${state.registry}/${repository}@${reference}: body digests to ${digest}`,
      );
    }
    return digest;
  }

  function manifestUrl(state: RegistryState, repository: string, reference: string): URL {
    if (!isValidTag(reference) && !isValidDigest(reference)) {
      throw new RegistryProtocolError(
        "registry-bad-reference",
        `${JSON.stringify(reference.slice(0, 80))} is neither a tag nor a sha256 digest`,
      );
    }
    return new URL(`${state.origin}/v2/${repository}/manifests/${reference}`);
  }

  async function fetchManifest(
    state: RegistryState,
    repository: string,
    reference: string,
  ): Promise<FetchedManifest> {
    const cached = manifestCache.get(`${state.registry}/${repository}@${reference}`);
    if (cached) return cached;
    const tagKey = `${state.registry}/${repository}:${reference}`;
    if (!isValidDigest(reference) && tagDigests.has(tagKey)) {
      const head = await request(
        state,
        repository,
        manifestUrl(state, repository, reference),
        "HEAD",
        MANIFEST_ACCEPT,
        0,
      );
      const digest = head.headers.get("docker-content-digest");
      if (head.status === 200 && digest && isValidDigest(digest)) {
        tagDigests.set(tagKey, digest);
        return (
          manifestCache.get(`${state.registry}/${repository}@${digest}`) ??
          fetchManifest(state, repository, digest)
        );
      }
      if (head.status !== 200) failFor(state, repository, `manifest ${reference}`, head);
    }
    const response = await request(
      state,
      repository,
      manifestUrl(state, repository, reference),
      "GET",
      MANIFEST_ACCEPT,
      limits.maxManifestBytes,
    );
    if (response.status !== 200) failFor(state, repository, `manifest ${reference}`, response);
    const mediaType = bareMediaType(response.headers.get("content-type"));
    if (!(MANIFEST_MEDIA_TYPES as readonly string[]).includes(mediaType)) {
      throw new RegistryProtocolError(
        "registry-bad-content-type",
        `${state.registry}/${repository}:${reference}: unsupported manifest Content-Type ${JSON.stringify(mediaType.slice(0, 100))}`,
      );
    }
    const digest = verifyDigest(
      state,
      repository,
      reference,
      response.body,
      response.headers.get("docker-content-digest"),
    );
    let json: unknown;
    try {
      json = JSON.parse(response.body.toString("utf8"));
    } catch {
      throw new RegistryProtocolError(
        "registry-bad-json",
        `${state.registry}/${repository}:${reference}: manifest is malformed JSON`,
      );
    }
    if (
      typeof json !== "object" ||
      json === null ||
      Array.isArray(json) ||
      (json as { schemaVersion?: unknown }).schemaVersion !== 2
    ) {
      throw new RegistryProtocolError(
        "registry-bad-json",
        `${state.registry}/${repository}:${reference}: manifest is not a schemaVersion 2 object`,
      );
    }
    const declared = (json as { mediaType?: unknown }).mediaType;
    if (typeof declared === "string" && declared !== mediaType) {
      throw new RegistryProtocolError(
        "registry-bad-content-type",
        `${state.registry}/${repository}:${reference}: Content-Type ${mediaType} contradicts the manifest's mediaType`,
      );
    }
    const manifest = { digest, mediaType, json: json as Record<string, unknown> };
    manifestCache.set(`${state.registry}/${repository}@${digest}`, manifest);
    if (!isValidDigest(reference)) tagDigests.set(tagKey, digest);
    return manifest;
  }

  /** Config blobs by digest; the promise is cached so concurrent describes share one fetch. */
  function fetchConfig(state: RegistryState, repository: string, digest: string): Promise<ImageConfigBlob> {
    const key = `${state.registry}/${digest}`;
    let config = configCache.get(key);
    if (!config) {
      config = fetchConfigOnce(state, repository, digest);
      configCache.set(key, config);
      config.catch(() => configCache.delete(key));
    }
    return config;
  }

  async function fetchConfigOnce(
    state: RegistryState,
    repository: string,
    digest: string,
  ): Promise<ImageConfigBlob> {
    if (!isValidDigest(digest))
      throw new RegistryProtocolError(
        "registry-bad-json",
        `${state.registry}/${repository}: manifest names an invalid config digest`,
      );
    const url = new URL(`${state.origin}/v2/${repository}/blobs/${digest}`);
    const response = await request(
      state,
      repository,
      url,
      "GET",
      "application/json, */*",
      limits.maxConfigBytes,
    );
    if (response.status !== 200) failFor(state, repository, `config blob ${digest}`, response);
    verifyDigest(state, repository, digest, response.body, null);
    let config: unknown;
    try {
      config = JSON.parse(response.body.toString("utf8"));
    } catch {
      throw new RegistryProtocolError(
        "registry-bad-json",
        `${state.registry}/${repository}: config blob ${digest} is malformed JSON`,
      );
    }
    if (typeof config !== "object" || config === null)
      throw new RegistryProtocolError(
        "registry-bad-json",
        `${state.registry}/${repository}: config blob ${digest} is not an object`,
      );
    return config as ImageConfigBlob;
  }

  return {
    async listTags(repositoryName: string): Promise<string[]> {
      const { state, repository, name } = target(repositoryName);
      const cached = tagCache.get(name);
      if (cached && cached.expiresAt > now()) return [...(await cached.tags)];
      // Store the promise so concurrent environments watching the same repository share one walk.
      const tags = walkTags(state, repository);
      const entry = { expiresAt: limits.tagCacheTtlMs > 0 ? Number.POSITIVE_INFINITY : 0, tags };
      tagCache.set(name, entry);
      try {
        const result = await tags;
        entry.expiresAt = now() + limits.tagCacheTtlMs;
        if (limits.tagCacheTtlMs <= 0) tagCache.delete(name);
        return [...result];
      } catch (error) {
        if (tagCache.get(name) === entry) tagCache.delete(name);
        throw error;
      }
    },

    async resolveDigest(repositoryName: string, reference: string): Promise<string> {
      const { state, repository } = target(repositoryName);
      const response = await request(
        state,
        repository,
        manifestUrl(state, repository, reference),
        "HEAD",
        MANIFEST_ACCEPT,
        0,
      );
      if (response.status !== 200) failFor(state, repository, `manifest ${reference}`, response);
      const digest = response.headers.get("docker-content-digest");
      if (digest && isValidDigest(digest)) {
        if (reference.startsWith("sha256:") && digest !== reference) {
          throw new RegistryProtocolError(
            "registry-digest-mismatch",
            `${state.registry}/${repository}@${reference}: registry announced ${digest}`,
          );
        }
        return digest;
      }
      // Some registries omit the header on HEAD: fall back to GET and hash the body ourselves.
      return (await fetchManifest(state, repository, reference)).digest;
    },

    async describe(repositoryName: string, reference: string): Promise<ImageDescription> {
      const { state, repository } = target(repositoryName);
      const manifest = await fetchManifest(state, repository, reference);
      let platforms: string[] = [];
      let imageManifest = manifest;
      if (isIndexMediaType(manifest.mediaType)) {
        const entries = Array.isArray(manifest.json.manifests)
          ? (manifest.json.manifests as {
              digest?: unknown;
              platform?: { os?: unknown; architecture?: unknown; variant?: unknown };
            }[])
          : [];
        const withPlatform = entries.filter(
          (entry) =>
            typeof entry.platform?.os === "string" &&
            typeof entry.platform.architecture === "string" &&
            entry.platform.os !== "unknown",
        );
        platforms = [
          ...new Set(
            withPlatform.map((entry) =>
              formatPlatform(
                entry.platform!.os as string,
                entry.platform!.architecture as string,
                entry.platform!.variant,
              ),
            ),
          ),
        ];
        // created and labels come from one platform's config; linux/amd64 when present.
        const chosen =
          withPlatform.find(
            (entry) => entry.platform!.os === "linux" && entry.platform!.architecture === "amd64",
          ) ??
          withPlatform[0] ??
          entries[0];
        if (!chosen || typeof chosen.digest !== "string") {
          return { digest: manifest.digest, mediaType: manifest.mediaType, platforms, labels: {} };
        }
        imageManifest = await fetchManifest(state, repository, chosen.digest);
        if (isIndexMediaType(imageManifest.mediaType))
          throw new RegistryProtocolError(
            "registry-bad-json",
            `${state.registry}/${repository}:${reference}: nested image index`,
          );
      }
      const configDigest = (imageManifest.json.config as { digest?: unknown } | undefined)?.digest;
      if (typeof configDigest !== "string")
        throw new RegistryProtocolError(
          "registry-bad-json",
          `${state.registry}/${repository}:${reference}: manifest has no config`,
        );
      const config = await fetchConfig(state, repository, configDigest);
      if (
        platforms.length === 0 &&
        typeof config.os === "string" &&
        typeof config.architecture === "string"
      ) {
        platforms = [formatPlatform(config.os, config.architecture, config.variant)];
      }
      const labels: Record<string, string> = {};
      for (const [key, value] of Object.entries(config.config?.Labels ?? {}))
        if (typeof value === "string") labels[key] = value;
      const description: ImageDescription = {
        digest: manifest.digest,
        mediaType: manifest.mediaType,
        platforms,
        labels,
      };
      const created = typeof config.created === "string" ? new Date(config.created) : undefined;
      if (created && !Number.isNaN(created.getTime())) description.created = created;
      const revision = labels["org.opencontainers.image.revision"];
      if (revision) description.revision = revision;
      return description;
    },

    invalidate(repositoryName: string): void {
      try {
        tagCache.delete(imageName(parseImageName(repositoryName)));
      } catch {
        // a hint about a name we could never have cached
      }
    },

    requestCounts(): Record<string, number> {
      return Object.fromEntries([...states.values()].map((state) => [state.registry, state.requests]));
    },
    budgetUse() {
      return Object.fromEntries(
        [...states.values()].map((state) => [state.registry, state.budget.use(now())]),
      );
    },
  };
}

function formatPlatform(os: string, architecture: string, variant: unknown): string {
  return typeof variant === "string" && variant
    ? `${os}/${architecture}/${variant}`
    : `${os}/${architecture}`;
}

function basicHeader(credentials: Credentials): string {
  return `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64")}`;
}
