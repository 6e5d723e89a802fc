import type { RegistryConfig } from "../../core/config/schema.js";
import type { AnswerHeaders, FetchLike } from "./fetch-types.js";
import { FerryError } from "../../core/errors.js";
import { registryApiHost } from "../../core/image-ref.js";
import { classifyHost } from "../../core/net-address.js";
import { addressProblem, refusedCause } from "./address-guard.js";
import { readCapped } from "./capped-body.js";
import { RegistryProtocolError, RegistryUnavailableError } from "./errors.js";
import type { Circuit, RequestBudget, Semaphore } from "./limits.js";
import { parseRateLimitRemaining, RATE_LIMIT_RESERVE, retryAfterMs } from "./rate-limit.js";
import { checkedRedirect } from "./redirect-check.js";
import type { RegistryLimits } from "./registry-limits.js";
import type { AuthChallenge } from "./www-authenticate.js";

/**
 * The registry client's transport: one HTTP exchange with a registry, with redirects followed by
 * hand (checked in redirect-check.ts: no https→http downgrade, no credentials to another host, no
 * link-local target), bodies read under a size cap (capped-body.ts), a timeout per request, bounded
 * retries with jitter for 5xx, network errors and timeouts, and the per-registry circuit (429),
 * request budget and concurrency limit. Connections themselves pass the address guard
 * (address-guard.ts) in the default fetch.
 */

/** What the client keeps per registry: where it is, its config, guards and auth state. */
export interface RegistryState {
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

export interface Exchange {
  status: number;
  headers: AnswerHeaders;
  body: Buffer;
  url: string;
}

/** docs/reliability.md row 16: the registry host itself, before any request is sent (names again after DNS). */
export function refuseUnsafeRegistry(registry: string, refusePrivate: boolean): void {
  const hostname = new URL(`http://${registryApiHost(registry)}`).hostname;
  const problem = addressProblem(hostname, refusePrivate);
  if (problem)
    throw new RegistryProtocolError(
      "registry-address-refused",
      `${registry}: registries at ${classifyHost(hostname) === "link-local" ? "link-local" : "private or loopback"} addresses are refused`,
    );
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** One HTTP exchange with a registry, reading at most `maxBytes` of the body. */
export type SendRequest = (
  state: RegistryState,
  url: URL,
  method: string,
  headers: Record<string, string>,
  maxBytes: number,
  /** A form body (ACR's token exchange); such a request is never redirected. */
  body?: string,
) => Promise<Exchange>;

export interface Transport {
  /** One request (redirects included), retried when that may help; a 429 opens the circuit. */
  exchange: SendRequest;
}

export function createTransport(deps: {
  limits: RegistryLimits;
  fetch: FetchLike;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}): Transport {
  const { limits, now, sleep, random } = deps;
  const ctx: TransportContext = { limits, fetchImpl: deps.fetch, now, sleep, random };
  return { exchange: (...args) => exchange(ctx, ...args) };
}

/** What the transport's steps share: the limits, the fetch and the clock, sleep and randomness they use. */
interface TransportContext {
  limits: RegistryLimits;
  fetchImpl: FetchLike;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

function backoffDelay(ctx: TransportContext, attempt: number): number {
  const { limits, random } = ctx;
  const ceiling = Math.min(limits.retryMaxMs, limits.retryBaseMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

async function takeBudget(ctx: TransportContext, state: RegistryState): Promise<void> {
  const { limits, now, sleep } = ctx;
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
  ctx: TransportContext,
  ...[state, url, method, headers, maxBytes, body]: Parameters<SendRequest>
): Promise<Exchange> {
  const { limits, fetchImpl } = ctx;
  let current = url;
  let sendHeaders = { ...headers };
  for (let hop = 0; hop <= limits.maxRedirects; hop += 1) {
    state.requests += 1;
    const response = await fetchImpl(current, {
      method,
      headers: sendHeaders,
      ...(body !== undefined ? { body } : {}),
      redirect: "manual",
      signal: AbortSignal.timeout(limits.requestTimeoutMs),
    });
    const location = response.headers.get("location");
    if (REDIRECTS.has(response.status) && location) {
      await response.body?.cancel();
      // A body may carry a token (ACR's /oauth2/exchange): it goes to the URL asked, nowhere else.
      if (body !== undefined)
        throw new RegistryProtocolError(
          "registry-redirect-refused",
          `${state.registry}: redirect of a ${method} with a body refused`,
        );
      const next = checkedRedirect(state.registry, current, location);
      if (next.host !== current.host) {
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
      body: method === "HEAD" ? Buffer.alloc(0) : await readCapped(state.registry, response, maxBytes),
      url: current.href,
    };
  }
  throw new RegistryProtocolError(
    "registry-too-many-redirects",
    `${state.registry}: more than ${limits.maxRedirects} redirects`,
  );
}

/** Bounded retries with jitter for 5xx, network errors and timeouts; a 429 opens the circuit. */
async function exchange(
  ctx: TransportContext,
  ...[state, url, method, headers, maxBytes, body]: Parameters<SendRequest>
): Promise<Exchange> {
  const { limits, now, sleep } = ctx;
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
    await takeBudget(ctx, state);
    let response: Exchange;
    try {
      response = await state.semaphore.run(() =>
        fetchFollowingRedirects(ctx, state, url, method, headers, maxBytes, body),
      );
    } catch (error) {
      refuseUnretriable(state, error);
      if (attempt < limits.maxRetries) {
        await sleep(backoffDelay(ctx, attempt));
        continue;
      }
      throw unreachable(ctx, state, error, attempt);
    }
    if (response.status === 429) throw rateLimited(ctx, state, response);
    if (response.status >= 500) {
      if (attempt < limits.maxRetries) {
        const asked = retryAfterMs(response.headers, now());
        await sleep(Math.min(limits.retryMaxMs, Math.max(backoffDelay(ctx, attempt), asked ?? 0)));
        continue;
      }
      throw new RegistryUnavailableError(
        "registry-server-error",
        state.registry,
        `${state.registry}: HTTP ${response.status} after ${attempt + 1} attempts`,
        { retryAfterMs: backoffDelay(ctx, attempt) },
      );
    }
    keepUnderRateLimit(ctx, state, response.headers);
    return response;
  }
}

/** A failure no retry can mend: Ferry's own errors, and a connection the address guard refused. */
function refuseUnretriable(state: RegistryState, error: unknown): void {
  if (error instanceof FerryError) throw error;
  const refused = refusedCause(error);
  if (refused) throw new RegistryProtocolError(refused.code, `${state.registry}: ${refused.message}`);
}

/** The error for a request that got no answer after its last attempt: timed out or unreachable. */
function unreachable(
  ctx: TransportContext,
  state: RegistryState,
  error: unknown,
  attempt: number,
): RegistryUnavailableError {
  const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
  const what = timedOut ? `timed out after ${ctx.limits.requestTimeoutMs}ms` : "unreachable";
  return new RegistryUnavailableError(
    timedOut ? "registry-timeout" : "registry-unreachable",
    state.registry,
    `${state.registry}: ${what} (${attempt + 1} attempts)`,
    { retryAfterMs: backoffDelay(ctx, attempt), cause: error },
  );
}

/** A 429 opens the registry's circuit for the time it names (or the default back-off). */
function rateLimited(
  ctx: TransportContext,
  state: RegistryState,
  response: Exchange,
): RegistryUnavailableError {
  const { limits, now } = ctx;
  const wait = retryAfterMs(response.headers, now()) ?? limits.defaultBackoffMs;
  state.circuit.open(now() + wait, "rate limited (429)");
  return new RegistryUnavailableError(
    "registry-rate-limited",
    state.registry,
    `${state.registry}: rate limited (429); retry in ${Math.ceil(wait / 1000)}s`,
    { retryAfterMs: wait },
  );
}

/**
 * Docker Hub announces its pull budget on every manifest answer (`ratelimit-remaining: 76;w=21600`,
 * https://docs.docker.com/docker-hub/usage/pulls/): with only the reserve left, Ferry stops
 * before the registry starts answering 429, until the window (or `ratelimit-reset`) ends.
 */
function keepUnderRateLimit(ctx: TransportContext, state: RegistryState, headers: AnswerHeaders): void {
  const { now } = ctx;
  const remaining = parseRateLimitRemaining(headers.get("ratelimit-remaining"));
  if (!remaining || remaining.remaining > RATE_LIMIT_RESERVE) return;
  const wait =
    retryAfterMs(onlyHeader(headers, "ratelimit-reset"), now()) ?? (remaining.windowSeconds ?? 3600) * 1000;
  state.circuit.open(
    now() + wait,
    `the registry's rate limit has ${remaining.remaining} requests left (ratelimit-remaining)`,
  );
}

/** `headers` with every header but `name` left out. */
function onlyHeader(headers: AnswerHeaders, name: string): AnswerHeaders {
  return { get: (asked) => (asked.toLowerCase() === name ? headers.get(name) : null) };
}
