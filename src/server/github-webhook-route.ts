import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { sendText, type Route } from "./route.js";

export const GITHUB_WEBHOOKS_PATH = "/api/github/webhooks";

/** GitHub caps webhook payloads at 25 MB; a bigger body is not GitHub and is refused unread (RELIABILITY.md row 4). */
const GITHUB_MAX_BODY_BYTES = 25 * 1024 * 1024;

/**
 * `POST /api/github/webhooks`: the body is read with a cap and its signature checked here, then
 * the delivery is handed to Probot's middleware (`deliver`) as a string.
 */
export function createGitHubWebhookRoute(options: {
  secret: string;
  deliver: (req: IncomingMessage, res: ServerResponse) => unknown;
}): Route {
  return async (req, res, path) => {
    if (req.method !== "POST" || path !== GITHUB_WEBHOOKS_PATH) return false;
    // Octokit's middleware buffers any body whole; read it here with a cap and hand it over as a string.
    const body = await readCappedBody(req, GITHUB_MAX_BODY_BYTES);
    if (body === undefined) {
      res.writeHead(413, { "content-type": "text/plain", connection: "close" });
      res.end("payload too large\n");
      return true;
    }
    // RELIABILITY.md rows 1-3 and 5: refuse before Probot parses anything. JSON only (415), and
    // the signature checked here over the raw bytes so that a bad one is a 401, never a 400/500.
    const contentType = String(req.headers["content-type"] ?? "")
      .split(";")[0]!
      .trim()
      .toLowerCase();
    if (contentType !== "application/json") {
      sendText(res, 415, "text/plain", "content type must be application/json\n");
      return true;
    }
    if (!validGitHubSignature(options.secret, body, req.headers["x-hub-signature-256"])) {
      sendText(res, 401, "text/plain", "invalid or missing X-Hub-Signature-256\n");
      return true;
    }
    (req as IncomingMessage & { body?: string }).body = body.toString("utf8");
    await options.deliver(req, res);
    return true;
  };
}

/** The body, or undefined once it passes `max` bytes (reading stops there; a declared length over it is not read at all). */
function readCappedBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  if (Number(req.headers["content-length"]) > max) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) {
        req.off("data", onData);
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** `sha256=<64 lowercase hex>` HMAC of the raw body, compared in constant time. */
function validGitHubSignature(secret: string, body: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== "string" || !/^sha256=[0-9a-f]{64}$/.test(header) || secret.length === 0)
    return false;
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(body).digest("hex")}`);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
