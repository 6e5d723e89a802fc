import type { WebhookPoster } from "../../app/notify-outbox.js";
import type { FetchAnswer } from "../registry/fetch-types.js";
import { guardedFetch, refusedCause, type LookupFunction } from "../registry/address-guard.js";

/**
 * Posts one notification body (docs/config.md "Notifications") through the registry client's
 * address guard (link-local and cloud metadata always refused; loopback and private in
 * production unless allowed, docs/security.md), with a per-request timeout, no redirects
 * followed, and at most `MAX_RESPONSE_BYTES` of the answer read. No error names the URL: it is
 * a secret (Slack's and Teams' carry their key in the path).
 */
export const MAX_RESPONSE_BYTES = 4096;
export const REQUEST_TIMEOUT_MS = 10_000;

export function webhookPoster(options: {
  refusePrivate: boolean;
  lookup?: LookupFunction;
  timeoutMs?: number;
}): WebhookPoster {
  const fetch = guardedFetch({
    refusePrivate: options.refusePrivate,
    ...(options.lookup ? { lookup: options.lookup } : {}),
  });
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  return {
    async post(url, body, headers) {
      const signal = AbortSignal.timeout(timeoutMs);
      try {
        const response = await fetch(url, {
          method: "POST",
          body,
          headers: { "content-type": "application/json", "user-agent": "ferry-notify", ...headers },
          redirect: "manual",
          signal,
        });
        await drain(response);
        return { kind: "answered", status: response.status };
      } catch (error) {
        const refused = refusedCause(error);
        if (refused) return { kind: "refused", reason: refused.message };
        return {
          kind: "unreachable",
          reason: signal.aborted ? `no answer in ${timeoutMs} ms` : "connection failed",
        };
      }
    },
  };
}

/** Reads at most MAX_RESPONSE_BYTES of the answer and drops the rest (the connection is then closed). */
async function drain(response: FetchAnswer): Promise<void> {
  const reader = response.body?.getReader();
  if (!reader) return;
  let read = 0;
  try {
    while (read < MAX_RESPONSE_BYTES) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The status is what counts; a body cut short changes nothing.
  }
}
