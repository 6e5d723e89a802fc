import type { IncomingMessage, ServerResponse } from "node:http";
import { HintCoalescer } from "../handlers/registry/hint-coalescer.js";
import {
  InvalidGenericPayload,
  hintsFromDistribution,
  hintsFromDockerHub,
  hintsFromGeneric,
  hintsFromHarbor,
  hintsFromQuay,
} from "../handlers/registry/hints-from-payloads.js";
import type { RegistryHint } from "../handlers/registry/registry-hint.js";
import { IntakeBudget } from "./intake-budget.js";
import { answerRefusal, constantTimeEqual, readRequestBody, wellFormedSignature } from "./request-body.js";
import { RequestRefusal } from "./request-refusal.js";

export interface RegistryReceiverOptions {
  /** One secret per route; a route whose secret is unset or empty is disabled (404). */
  secrets: { distribution?: string; harbor?: string; dockerhub?: string; quay?: string; generic?: string };
  /** Body cap; default 3 MiB like Flux. Reading stops at the first chunk past it and the answer is 413. */
  maxBodyBytes?: number;
  /** Window in which hints for one repository are merged into one `onHints` call; default 1000 ms, 0 = next tick. */
  coalesceMs?: number;
  /** Time allowed to receive the body before 408; default 30 s (docs/reliability.md row 4). */
  bodyTimeoutMs?: number;
  /** The server-wide budget of bodies in flight (shared with the GitHub route); default: one of its own. */
  budget?: IntakeBudget;
  onHints: (hints: RegistryHint[]) => void | Promise<void>;
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export type RegistryRequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/**
 * The handler, plus `flush` (deliver coalesced hints now), `delivered` (wait for deliveries already
 * started) and `close` (drop pending ones) for shutdown and tests.
 */
export interface RegistryReceiver extends RegistryRequestHandler {
  flush(): Promise<void>;
  delivered(): Promise<void>;
  close(): void;
}

type Provider = keyof RegistryReceiverOptions["secrets"];

/** How each route authenticates and reads its payload: an explicit map, no discovery. */
const ROUTES: Record<
  Provider,
  { auth: "authorization-header" | "url-token" | "hmac"; extract: (payload: unknown) => RegistryHint[] }
> = {
  distribution: { auth: "authorization-header", extract: hintsFromDistribution },
  harbor: { auth: "authorization-header", extract: hintsFromHarbor },
  dockerhub: { auth: "url-token", extract: hintsFromDockerHub },
  quay: { auth: "url-token", extract: hintsFromQuay },
  generic: { auth: "hmac", extract: hintsFromGeneric },
};

export const SIGNATURE_HEADER = "x-ferry-signature-256";
const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024;

/**
 * Returns a node:http request handler that answers the /registry/* routes and returns false for
 * other paths so that the server tries its next route. Every payload only becomes a hint;
 * nothing here calls a registry or follows a URL from the payload.
 */
export function createRegistryReceiver(options: RegistryReceiverOptions): RegistryReceiver {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const budget = options.budget ?? new IntakeBudget();
  const bodyTimeoutMs = options.bodyTimeoutMs ?? budget.requestTimeoutMs;
  const log = options.log;
  const deliver = async (hints: RegistryHint[]) => {
    try {
      await options.onHints(hints);
    } catch (error) {
      log?.warn(
        { error: error instanceof Error ? error.message : String(error), hints: hints.length },
        "registry hint handler failed",
      );
    }
  };
  // A window of 0 still goes through the coalescer (next tick), so `flush` sees every delivery.
  const coalescer = new HintCoalescer(Math.max(0, options.coalesceMs ?? 1000), deliver);

  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const pathname = (req.url ?? "/").split("?")[0]!;
    if (pathname !== "/registry" && !pathname.startsWith("/registry/")) return false;
    let provider: Provider | undefined;
    try {
      const match = /^\/registry\/(distribution|harbor|dockerhub|quay|generic)(?:\/([^/]*))?\/?$/.exec(
        pathname,
      );
      const tokenInPath = match?.[2];
      provider = match?.[1] as Provider | undefined;
      const route = provider ? ROUTES[provider] : undefined;
      // A token segment only exists on the token routes; any other shape is an unknown path.
      if (!provider || !route || (route.auth === "url-token") !== (tokenInPath !== undefined)) {
        throw new RequestRefusal(404, "unknown route");
      }
      const secret = options.secrets[provider];
      if (!secret) throw new RequestRefusal(404, "route not configured");
      if (req.method !== "POST") throw new RequestRefusal(405, "method not allowed");

      if (route.auth === "authorization-header" && !authorizationMatches(req.headers.authorization, secret)) {
        throw new RequestRefusal(401, "bad credentials");
      }
      if (route.auth === "url-token" && !constantTimeEqual(safeDecode(tokenInPath!), secret)) {
        throw new RequestRefusal(401, "bad credentials");
      }
      if (!isJsonContentType(req.headers["content-type"]))
        throw new RequestRefusal(415, "content type must be JSON");
      const signature = req.headers[SIGNATURE_HEADER];
      if (route.auth === "hmac" && !wellFormedSignature(signature))
        throw new RequestRefusal(401, "bad signature");

      const body = await readRequestBody(req, res, {
        maxBytes: maxBodyBytes,
        timeoutMs: bodyTimeoutMs,
        budget,
        ...(route.auth === "hmac" ? { hmacKey: secret } : {}),
      });
      // HMAC over the raw bytes as received, never over re-serialized JSON (docs/reliability.md row 3).
      if (route.auth === "hmac" && !constantTimeEqual(signature as string, body.signature!)) {
        throw new RequestRefusal(401, "bad signature");
      }
      let payload: unknown;
      try {
        payload = JSON.parse(body.bytes().toString("utf8"));
      } catch {
        throw new RequestRefusal(400, "malformed JSON");
      }
      let hints: RegistryHint[];
      try {
        hints = route.extract(payload);
      } catch (error) {
        if (error instanceof InvalidGenericPayload) throw new RequestRefusal(400, error.message);
        throw error;
      }
      if (hints.length > 0) coalescer.add(hints);
      log?.info(
        { route: provider, hints: hints.length },
        hints.length > 0 ? "registry hints accepted" : "registry payload ignored",
      );
      respond(res, 202, { accepted: hints.length });
    } catch (error) {
      if (error instanceof RequestRefusal) {
        // Only the route and the reason: never the body or the credentials that came with it.
        log?.warn(
          { route: provider ?? "unknown", status: error.status, reason: error.reason },
          "registry webhook refused",
        );
        answerRefusal(
          req,
          res,
          error,
          { type: "application/json", text: JSON.stringify({ error: error.reason }) },
          maxBodyBytes,
        );
      } else {
        log?.warn(
          { route: provider ?? "unknown", error: error instanceof Error ? error.message : String(error) },
          "registry webhook failed",
        );
        respond(res, 500, { error: "internal error" });
      }
    }
    return true;
  };

  return Object.assign(handler, {
    flush: () => coalescer.flush(),
    delivered: () => coalescer.delivered(),
    close: () => coalescer.close(),
  });
}

function respond(res: ServerResponse, status: number, body: object): void {
  if (res.headersSent) return;
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(text);
}

/** `application/json`, `application/*+json` (distribution's events type), with parameters. */
function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const type = header.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/**
 * The configured secret is the whole header value (distribution `headers: {Authorization: [...]}`,
 * Harbor "Auth Header"); a bare token is also accepted as `Bearer <token>`.
 */
function authorizationMatches(header: string | undefined, secret: string): boolean {
  if (header === undefined) return false;
  const exact = constantTimeEqual(header, secret);
  const bearer = constantTimeEqual(header, `Bearer ${secret}`);
  return exact || bearer;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
