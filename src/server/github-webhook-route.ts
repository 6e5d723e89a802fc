import type { IncomingMessage, ServerResponse } from "node:http";
import type { IntakeBudget } from "./intake-budget.js";
import { answerRefusal, constantTimeEqual, readRequestBody, wellFormedSignature } from "./request-body.js";
import { RequestRefusal } from "./request-refusal.js";
import { sendText, type Route } from "./route.js";

export const GITHUB_WEBHOOKS_PATH = "/api/github/webhooks";

/** GitHub caps webhook payloads at 25 MB; a bigger body is not GitHub and is refused unread (docs/reliability.md row 4). */
export const GITHUB_MAX_BODY_BYTES = 25 * 1024 * 1024;

/** A delivery GitHub signed and Ferry verified, ready for the app's event handlers. */
export interface GitHubDelivery {
  id: string;
  name: string;
  payload: object;
}

export interface GitHubWebhookRouteOptions {
  secret: string;
  budget: IntakeBudget;
  /** Hands a verified delivery to the app (Probot's `receive`); a throw means the payload did not fit its event. */
  receive: (delivery: GitHubDelivery) => Promise<void>;
  /** Logs the stack of a delivery that failed in the handlers; never echoed to the sender. */
  onDeliveryError: (error: unknown, delivery: { id: string; name: string }) => void;
  maxBodyBytes?: number;
  bodyTimeoutMs?: number;
}

const EVENT_NAME = /^[a-z_]{1,64}$/;
const DELIVERY_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * `POST /api/github/webhooks`. Every header is checked before a byte of the body is read (JSON
 * content type, a well-formed `X-Hub-Signature-256`, the event and delivery headers, the declared
 * length against GitHub's cap); the body is then read within the server's intake budget with its
 * HMAC computed as it arrives, and only a verified, parseable delivery reaches the app. See
 * https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries.
 */
export function createGitHubWebhookRoute(options: GitHubWebhookRouteOptions): Route {
  const maxBytes = options.maxBodyBytes ?? GITHUB_MAX_BODY_BYTES;
  return async (req, res, path) => {
    if (path !== GITHUB_WEBHOOKS_PATH) return false;
    try {
      await handleDelivery(req, res, options, maxBytes);
    } catch (error) {
      if (!(error instanceof RequestRefusal)) throw error;
      answerRefusal(req, res, error, { type: "text/plain", text: `${error.reason}\n` }, maxBytes);
    }
    return true;
  };
}

async function handleDelivery(
  req: IncomingMessage,
  res: ServerResponse,
  options: GitHubWebhookRouteOptions,
  maxBytes: number,
): Promise<void> {
  if (req.method !== "POST") throw new RequestRefusal(405, "method not allowed", { allow: "POST" });
  const contentType = String(req.headers["content-type"] ?? "")
    .split(";")[0]!
    .trim()
    .toLowerCase();
  if (contentType !== "application/json")
    throw new RequestRefusal(415, "content type must be application/json");
  const signature = req.headers["x-hub-signature-256"];
  if (!wellFormedSignature(signature) || options.secret.length === 0)
    throw new RequestRefusal(401, "invalid or missing X-Hub-Signature-256");
  const name = req.headers["x-github-event"];
  const id = req.headers["x-github-delivery"];
  if (typeof name !== "string" || !EVENT_NAME.test(name) || typeof id !== "string" || !DELIVERY_ID.test(id))
    throw new RequestRefusal(400, "missing or invalid X-GitHub-Event or X-GitHub-Delivery");

  const body = await readRequestBody(req, res, {
    maxBytes,
    timeoutMs: options.bodyTimeoutMs ?? options.budget.requestTimeoutMs,
    budget: options.budget,
    hmacKey: options.secret,
  });
  // Over the raw bytes as received, never re-serialized JSON (docs/reliability.md rows 1-3).
  if (!constantTimeEqual(signature, body.signature!))
    throw new RequestRefusal(401, "invalid or missing X-Hub-Signature-256");
  let payload: unknown;
  try {
    payload = JSON.parse(body.bytes().toString("utf8"));
  } catch {
    throw new RequestRefusal(400, "malformed delivery");
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload))
    throw new RequestRefusal(400, "malformed delivery");
  try {
    await options.receive({ id, name, payload });
  } catch (error) {
    // Signed by GitHub but not the shape its event promises: the stack goes to the log only.
    options.onDeliveryError(error, { id, name });
    throw new RequestRefusal(400, "malformed delivery");
  }
  sendText(res, 200, "text/plain", "ok\n");
}
