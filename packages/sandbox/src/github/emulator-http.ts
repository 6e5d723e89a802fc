/** The GitHub emulator's HTTP front: one request from credentials to recorded response. */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { GitHubEmulator } from "./emulator.js";
import { authenticate } from "./emulator-accounts.js";
import { handleGitHttp } from "./git-http.js";
import { isContentCreating } from "./content-limits.js";
import { handleGraphql } from "./graphql.js";
import { actorName, type Actor } from "./model.js";
import { ApiError, type RequestContext } from "./router.js";

export interface RecordedRequest {
  method: string;
  path: string;
  status: number;
  actor: string;
  /** The installation whose token made the request (the bot login is the same for every one). */
  installation?: number;
}

/** What the HTTP front remembers across requests: the request log and rate-limit usage per actor. */
export interface RequestLog {
  recorded: RecordedRequest[];
  rateUsage: Map<string, number>;
}

/** Answers one API request: authenticates, applies faults, routes, and records it in `log`. */
export async function handleRequest(
  emu: GitHubEmulator,
  log: RequestLog,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", emu.apiUrl);
  let pathname = url.pathname.replace(/^\/api\/v3(?=\/)/, "");
  if (pathname === "/api/graphql") pathname = "/graphql";
  const method = (req.method ?? "GET").toUpperCase();
  if (emu.faults.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, emu.faults.latencyMs));
  if (/^\/[^/]+\/[^/]+\.git\//.test(pathname)) {
    await handleGitHttp(emu, req, res, pathname, url).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
    return;
  }
  let status = 500;
  let actor: Actor = { kind: "anonymous" };
  const headers: Record<string, string> = {
    "content-type": "application/json; charset=utf-8",
    "x-github-media-type": "github.v3; format=json",
    "x-github-request-id": randomBytes(8).toString("hex").toUpperCase(),
  };
  let payload: unknown;
  try {
    actor = authenticate(emu, req.headers.authorization);
    Object.assign(headers, rateLimitHeaders(log, actor, pathname === "/graphql" ? "graphql" : "core"));
    emu.faults.beforeRequest(method, pathname, Date.now());
    const body = await readJsonBody(req);
    if (actor.kind === "installation" && isContentCreating(method, pathname, body))
      emu.faults.contentLimits.take(actor.installationId, Date.now());
    const ctx: RequestContext = { method, params: {}, query: url.searchParams, body, actor, url };
    if (pathname === "/graphql" && method === "POST") {
      const reply = await handleGraphql(emu, ctx);
      status = reply.status ?? 200;
      payload = reply.body;
    } else {
      const matched = emu.router.match(method, pathname);
      // GitHub answers 404 both for unknown paths and for a known path under another method.
      if (matched === undefined || matched === "methodMismatch") throw new ApiError(404, "Not Found");
      ctx.params = matched.params;
      const reply = await matched.handler(ctx);
      status = reply.status ?? 200;
      payload = reply.body;
      Object.assign(headers, reply.headers);
    }
  } catch (error) {
    if (error instanceof ApiError) {
      status = error.status;
      payload = {
        message: error.message,
        documentation_url: "https://docs.github.com/rest",
        status: String(error.status),
        ...(error.errors ? { errors: error.errors } : {}),
      };
      Object.assign(headers, error.headers);
    } else {
      status = 500;
      payload = {
        message: "Internal Server Error",
        documentation_url: "https://docs.github.com/rest",
        status: "500",
      };
      // An emulator bug must be loud in tests.
      console.error("github emulator:", error);
    }
  }
  log.recorded.push({
    method,
    path: pathname + url.search,
    status,
    actor: actorName(actor),
    ...(actor.kind === "installation" ? { installation: actor.installationId } : {}),
  });
  if (status === 204 || status === 304 || payload === undefined) {
    delete headers["content-type"];
    res.writeHead(status, headers).end();
    return;
  }
  res.writeHead(status, headers).end(JSON.stringify(payload));
}

function rateLimitHeaders(log: RequestLog, actor: Actor, resource: string): Record<string, string> {
  // GitHub counts an installation's requests per installation, not per app bot.
  const who = actor.kind === "installation" ? `installation:${actor.installationId}` : actorName(actor);
  const key = `${who}:${resource}`;
  const used = (log.rateUsage.get(key) ?? 0) + 1;
  log.rateUsage.set(key, used);
  const limit = actor.kind === "anonymous" ? 60 : 5000;
  const resetAt = Math.ceil(Date.now() / 1000 / 3600) * 3600;
  return {
    "x-ratelimit-limit": String(limit),
    "x-ratelimit-remaining": String(Math.max(0, limit - used)),
    "x-ratelimit-reset": String(resetAt),
    "x-ratelimit-used": String(used),
    "x-ratelimit-resource": resource,
  };
}

async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
      throw new Error("not an object");
    return parsed as Record<string, unknown>;
  } catch {
    throw new ApiError(400, "Problems parsing JSON");
  }
}
