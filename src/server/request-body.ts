/**
 * The one body reader of every webhook route: size-capped, time-limited, held to a minimum rate,
 * HMAC-SHA256 computed over the bytes as they arrive, and holding only the bytes received against
 * the server-wide intake budget and its source's share of it, so that unauthenticated senders
 * cannot make the process hold more than the budget, nor hold it by sending slowly, however many
 * bodies they send at once (docs/security.md "Webhook intake").
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { sourceOf, type IntakeBudget } from "./intake-budget.js";
import { RequestRefusal } from "./request-refusal.js";

export interface ReadBodyOptions {
  /** Bytes allowed for this route; a declared length over it is refused unread, a longer stream is cut off. */
  maxBytes: number;
  timeoutMs: number;
  budget: IntakeBudget;
  /** Key of an HMAC-SHA256 computed over the body as it arrives. */
  hmacKey?: string;
}

export interface ReadBody {
  /** The body in one buffer; joined only when asked, so that a body refused on its signature never is. */
  bytes(): Buffer;
  /** `sha256=<hex>` of the body under `hmacKey`, when one was given. */
  signature?: string;
}

/**
 * Reads the body of `req` within `options`, holding its bytes until `res` is closed. Throws
 * {@link RequestRefusal}: 413 over the cap, 503 past the budget or the source's share of it, 408 on
 * a body below the minimum rate or past its timeout, 400 on an aborted one. Call it only after
 * every header check, so that a refused sender's body is never read.
 */
export function readRequestBody(
  req: IncomingMessage,
  res: ServerResponse,
  options: ReadBodyOptions,
): Promise<ReadBody> {
  const header = req.headers["content-length"];
  const declared = header === undefined ? undefined : Number(header);
  if (declared !== undefined && !(Number.isSafeInteger(declared) && declared >= 0))
    return Promise.reject(new RequestRefusal(400, "invalid content length"));
  if (declared !== undefined && declared > options.maxBytes)
    return Promise.reject(new RequestRefusal(413, "body too large"));
  const admission = options.budget.admit(sourceOf(req.socket?.remoteAddress));
  if (!admission) return Promise.reject(options.budget.busy());
  // The bytes are held as long as the request is being answered (the body is handed on).
  res.once("close", () => admission.release());
  const hmac = options.hmacKey !== undefined ? createHmac("sha256", options.hmacKey) : undefined;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: RequestRefusal): void => {
      clearTimeout(timer);
      clearInterval(rateCheck);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      if (error) {
        req.pause();
        chunks.length = 0;
        reject(error);
        return;
      }
      const result: ReadBody = { bytes: () => Buffer.concat(chunks, size) };
      if (hmac) result.signature = `sha256=${hmac.digest("hex")}`;
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      if (size + chunk.length > options.maxBytes)
        return finish(new RequestRefusal(413, "body too large", {}, true));
      // Held as they arrive, whatever length was declared.
      if (!admission.grow(chunk.length)) return finish(options.budget.busy(true));
      hmac?.update(chunk);
      chunks.push(chunk);
      size += chunk.length;
    };
    const onEnd = (): void => finish();
    const onError = (): void => finish(new RequestRefusal(400, "request aborted", {}, true));
    const timer = setTimeout(
      () => finish(new RequestRefusal(408, "body timeout", {}, true)),
      options.timeoutMs,
    );
    timer.unref?.();
    const rateCheck = setInterval(
      () => {
        if (admission.tooSlow(declared)) finish(new RequestRefusal(408, "body too slow", {}, true));
      },
      Math.max(10, Math.min(1_000, options.budget.rateGraceMs)),
    );
    rateCheck.unref?.();
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

/** `sha256=<64 lowercase hex>`: the only signature header shape GitHub and Ferry's generic route send. */
export function wellFormedSignature(header: string | string[] | undefined): header is string {
  return typeof header === "string" && /^sha256=[0-9a-f]{64}$/.test(header);
}

/** Constant-time string comparison (the lengths may differ; the work does not depend on where they differ). */
export function constantTimeEqual(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  // timingSafeEqual needs equal lengths; comparing against itself keeps the work constant.
  if (a.length !== b.length) {
    timingSafeEqual(b, b);
    return false;
  }
  return timingSafeEqual(a, b);
}

/**
 * Answers a refusal. The rest of a body is never read when the refusal came part-way through it,
 * or when its length is unknown or over the cap: the connection is closed after the answer. A
 * refused body of declared length within the cap is left to Node, which discards it as it arrives
 * (never holding it) and keeps the connection usable, so the sender reliably sees the answer.
 */
export function answerRefusal(
  req: IncomingMessage,
  res: ServerResponse,
  refusal: RequestRefusal,
  body: { type: string; text: string },
  maxBytes: number,
): void {
  if (res.headersSent) return;
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  const closeConnection = refusal.midBody || !(Number.isSafeInteger(declared) && declared <= maxBytes);
  res.statusCode = refusal.status;
  for (const [name, value] of Object.entries(refusal.headers)) res.setHeader(name, value);
  res.setHeader("Content-Type", body.type);
  res.setHeader("Content-Length", Buffer.byteLength(body.text));
  if (closeConnection) res.setHeader("Connection", "close");
  res.end(body.text);
}
