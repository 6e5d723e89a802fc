import type { RegistryConfig } from "../../core/config/schema.js";
import { FerryError } from "../../core/errors.js";
import { registryApiHost } from "../../core/image-ref.js";
import { classifyHost } from "../../core/net-address.js";
import { addressProblem, refusedCause } from "./address-guard.js";
import { RegistryProtocolError, RegistryUnavailableError } from "./errors.js";
import { isPrivateHost } from "./hosts.js";
import type { Circuit, RequestBudget, Semaphore } from "./limits.js";
import { parseRateLimitRemaining, RATE_LIMIT_RESERVE, retryAfterMs } from "./rate-limit.js";
import type { RegistryLimits } from "./registry-limits.js";
import type { AuthChallenge } from "./www-authenticate.js";

/**
 * The registry client's transport: one HTTP exchange with a registry, with redirects followed by
 * hand (no https→http downgrade, no credentials to another host, no link-local target), bodies
 * read under a size cap, a timeout per request, bounded retries with jitter for 5xx, network
 * errors and timeouts, and the per-registry circuit (429), request budget and concurrency limit.
 * Connections themselves pass the address guard (address-guard.ts) in the default fetch.
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
  headers: Headers;
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
  fetch: typeof fetch;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}): Transport {
  const { limits, now, sleep, random } = deps;
  const fetchImpl = deps.fetch;

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
  const fetchFollowingRedirects: SendRequest = async (state, url, method, headers, maxBytes, body) => {
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
          if (classifyHost(next.hostname) === "link-local")
            throw new RegistryProtocolError(
              "registry-redirect-refused",
              `${state.registry}: redirect to link-local address ${next.hostname} refused`,
            );
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
  };

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
  const exchange: SendRequest = async (state, url, method, headers, maxBytes, body) => {
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
          fetchFollowingRedirects(state, url, method, headers, maxBytes, body),
        );
      } catch (error) {
        if (error instanceof FerryError) throw error;
        const refused = refusedCause(error);
        if (refused) throw new RegistryProtocolError(refused.code, `${state.registry}: ${refused.message}`);
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
      keepUnderRateLimit(state, response.headers);
      return response;
    }
  };

  /**
   * Docker Hub announces its pull budget on every manifest answer (`ratelimit-remaining: 76;w=21600`,
   * https://docs.docker.com/docker-hub/usage/pulls/): with only the reserve left, Ferry stops
   * before the registry starts answering 429, until the window (or `ratelimit-reset`) ends.
   */
  function keepUnderRateLimit(state: RegistryState, headers: Headers): void {
    const remaining = parseRateLimitRemaining(headers.get("ratelimit-remaining"));
    if (!remaining || remaining.remaining > RATE_LIMIT_RESERVE) return;
    const wait =
      retryAfterMs(new Headers({ "ratelimit-reset": headers.get("ratelimit-reset") ?? "" }), now()) ??
      (remaining.windowSeconds ?? 3600) * 1000;
    state.circuit.open(
      now() + wait,
      `the registry's rate limit has ${remaining.remaining} requests left (ratelimit-remaining)`,
    );
  }

  return { exchange };
}
