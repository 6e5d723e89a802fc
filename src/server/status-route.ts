import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { nodeHttp } from "../adapters/http/node-http.js";
import type { AddressInfo } from "node:net";
import { constantTimeEqual } from "./request-body.js";
import { sendText, type Route } from "./route.js";

/**
 * Who may read `GET /status` (it names repositories, versions and who set holds; docs/security.md):
 * `open` on the internal status listener only; on the public listener a bearer `token` is required,
 * and without one the route does not exist (404).
 */
export type StatusAccess = { open: true } | { token: string | undefined };

/**
 * The `/status` access rule, shared by `GET /status` and the page at `GET /`: `absent` (the route
 * does not exist here), `refused` (401 or 405 already sent) or `allowed`.
 */
export function checkStatusAccess(
  req: IncomingMessage,
  res: ServerResponse,
  access: StatusAccess,
): "absent" | "refused" | "allowed" {
  if (!("open" in access)) {
    if (!access.token) return "absent";
    const header = req.headers.authorization;
    if (typeof header !== "string" || !constantTimeEqual(header, `Bearer ${access.token}`)) {
      res.writeHead(401, {
        "content-type": "text/plain",
        "www-authenticate": 'Bearer realm="ferry-status"',
      });
      res.end("a bearer token is required\n");
      return "refused";
    }
  }
  if (req.method !== "GET") {
    res.writeHead(405, { "content-type": "text/plain", allow: "GET" });
    res.end("method not allowed\n");
    return "refused";
  }
  return "allowed";
}

/** `GET /status`: environments × images of every configured repository, as JSON. */
export function createStatusRoute(
  status: () => Promise<Record<string, unknown>>,
  access: StatusAccess,
): Route {
  return async (req, res, path) => {
    if (path !== "/status") return false;
    const decision = checkStatusAccess(req, res, access);
    if (decision !== "allowed") return decision === "refused";
    sendText(res, 200, "application/json", JSON.stringify(await status()));
    return true;
  };
}

/** A listener of its own for `/status`, meant for an internal address (loopback, the Pod network). */
export async function startStatusListener(
  route: Route,
  address: { host: string; port: number },
  onError: (error: unknown) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = nodeHttp().createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    route(req, res, path)
      .then((handled) => {
        if (!handled) sendText(res, 404, "text/plain", "not found\n");
      })
      .catch((error: unknown) => {
        onError(error);
        if (!res.headersSent) sendText(res, 500, "text/plain", "internal error\n");
      });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(address.port, address.host, resolve));
  const { port } = server.address() as AddressInfo;
  const host = address.host.includes(":") ? `[${address.host}]` : address.host;
  return {
    url: `http://${host}:${port}/status`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
