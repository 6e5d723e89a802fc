/**
 * The one body reader of every webhook route: size-capped, time-limited, HMAC-SHA256 computed over
 * the bytes as they arrive, and admitted against a server-wide budget of bodies in flight, so that
 * unauthenticated senders cannot make the process hold more than the budget however many bodies
 * they send at once (docs/security.md).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** A request refused before or while its body was read: the status and a fixed, generic reason. */
export class RequestRefusal extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly headers: Record<string, string> = {},
    /** Refused part-way through the body: the rest is never read, the connection is closed. */
    readonly midBody = false,
  ) {
    super(reason);
  }
}

export interface IntakeLimits {
  /** Bytes of request bodies held at once across every route (default 64 MiB). */
  maxInFlightBytes?: number;
  /** Bodies being read or handled at once across every route (default 64). */
  maxConcurrentBodies?: number;
  /** Seconds a refused sender is asked to wait (`Retry-After`, default 5). */
  retryAfterSeconds?: number;
}

/**
 * The server-wide budget of request bodies. A body reserves its declared length up front (or its
 * bytes as they arrive when no length is declared) and gives them back when its response ends;
 * past the budget the answer is 503 with `Retry-After`.
 */
export class IntakeBudget {
  readonly maxInFlightBytes: number;
  readonly maxConcurrentBodies: number;
  readonly retryAfterSeconds: number;
  private bytes = 0;
  private bodies = 0;

  constructor(limits: IntakeLimits = {}) {
    this.maxInFlightBytes = limits.maxInFlightBytes ?? 64 * 1024 * 1024;
    this.maxConcurrentBodies = limits.maxConcurrentBodies ?? 64;
    this.retryAfterSeconds = limits.retryAfterSeconds ?? 5;
  }

  /** Bytes and bodies currently admitted (metrics and tests). */
  get inFlight(): { bytes: number; bodies: number } {
    return { bytes: this.bytes, bodies: this.bodies };
  }

  /** A slot for one body with `bytes` reserved, or undefined when the budget is spent. */
  admit(bytes: number): Admission | undefined {
    if (this.bodies >= this.maxConcurrentBodies || this.bytes + bytes > this.maxInFlightBytes)
      return undefined;
    this.bodies++;
    this.bytes += bytes;
    let held = bytes;
    let released = false;
    return {
      grow: (more) => {
        if (released || this.bytes + more > this.maxInFlightBytes) return false;
        this.bytes += more;
        held += more;
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.bodies--;
        this.bytes -= held;
      },
    };
  }

  busy(midBody = false): RequestRefusal {
    return new RequestRefusal(
      503,
      "too many requests in flight; retry later",
      { "retry-after": String(this.retryAfterSeconds) },
      midBody,
    );
  }
}

interface Admission {
  /** Reserves `more` bytes; false when the budget has no room left. */
  grow(more: number): boolean;
  release(): void;
}

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
 * Reads the body of `req` within `options`, holding its reservation until `res` is closed. Throws
 * {@link RequestRefusal}: 413 over the cap, 503 past the budget, 408 on a stalled body, 400 on an
 * aborted one. Call it only after every header check, so that a refused sender's body is never read.
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
  const admission = options.budget.admit(declared ?? 0);
  if (!admission) return Promise.reject(options.budget.busy());
  // The reservation lasts as long as the request is being answered (the body is handed on).
  res.once("close", () => admission.release());
  const hmac = options.hmacKey !== undefined ? createHmac("sha256", options.hmacKey) : undefined;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error?: RequestRefusal): void => {
      clearTimeout(timer);
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
      // With a declared length the bytes were reserved up front; otherwise as they come.
      if (declared === undefined && !admission.grow(chunk.length)) return finish(options.budget.busy(true));
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
