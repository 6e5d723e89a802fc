/**
 * A GET that Ferry makes itself through its filtering proxy (filtering-proxy.ts), never directly:
 * plain HTTP as an absolute-form request, HTTPS through a CONNECT tunnel with TLS verified against
 * the host's name. Each redirect is a new request through the proxy, so it is admitted (or not)
 * again. Bounded: bytes, time, redirects. Used to vendor remote kustomize files (docs/security.md,
 * "Render network").
 */
import type { IncomingMessage } from "node:http";
import { nodeHttp, nodeHttps, nodeTls } from "../http/node-http.js";
import { UserError } from "../../core/errors.js";

export interface ProxiedFetchLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export const DEFAULT_PROXIED_FETCH_LIMITS: ProxiedFetchLimits = {
  maxBytes: 4 * 1024 * 1024,
  timeoutMs: 30_000,
  maxRedirects: 5,
};

/** The body of `target` fetched through the proxy at `proxyUrl`; a UserError for anything but 2xx. */
export async function fetchThroughProxy(
  proxyUrl: string,
  target: string,
  limits: ProxiedFetchLimits = DEFAULT_PROXIED_FETCH_LIMITS,
): Promise<Buffer> {
  const deadline = Date.now() + limits.timeoutMs;
  let url = new URL(target);
  for (let redirects = 0; ; redirects++) {
    const answer = await getOnce(new URL(proxyUrl), url, deadline);
    const status = answer.statusCode ?? 0;
    const location = answer.headers.location;
    if (status >= 300 && status < 400 && location !== undefined) {
      answer.resume();
      if (redirects >= limits.maxRedirects)
        throw new UserError(
          "remote-base-fetch-failed",
          `${target}: more than ${limits.maxRedirects} redirects`,
        );
      url = new URL(location, url);
      continue;
    }
    const body = await readCapped(answer, limits.maxBytes, target);
    if (status < 200 || status > 299)
      throw new UserError(
        "remote-base-fetch-failed",
        `${url.href}: HTTP ${status}${status === 403 ? `: ${body.toString("utf8").trim().slice(0, 300)}` : ""}`,
      );
    return body;
  }
}

function getOnce(proxy: URL, url: URL, deadline: number): Promise<IncomingMessage> {
  const timeout = Math.max(1, deadline - Date.now());
  const failed = (error: Error) =>
    new UserError("remote-base-fetch-failed", `${url.href}: ${error.message}`, { cause: error });
  return new Promise((resolve, reject) => {
    const proxyAt = { host: proxy.hostname, port: Number(proxy.port) };
    if (url.protocol === "http:") {
      const req = nodeHttp().request({
        ...proxyAt,
        method: "GET",
        path: url.href,
        headers: { host: url.host },
        timeout,
      });
      req.on("response", resolve);
      req.on("timeout", () => req.destroy(new Error("timed out")));
      req.on("error", (error) => reject(failed(error)));
      req.end();
      return;
    }
    if (url.protocol !== "https:") return reject(failed(new Error(`${url.protocol} is not HTTP`)));
    const port = Number(url.port || 443);
    const tunnel = nodeHttp().request({
      ...proxyAt,
      method: "CONNECT",
      path: `${url.hostname}:${port}`,
      timeout,
    });
    tunnel.on("timeout", () => tunnel.destroy(new Error("timed out")));
    tunnel.on("error", (error) => reject(failed(error)));
    tunnel.on("connect", (answer, socket) => {
      if (answer.statusCode !== 200) {
        socket.destroy();
        return reject(failed(new Error(`the proxy answered ${answer.statusCode ?? 0} to CONNECT`)));
      }
      const secure = nodeTls().connect({ socket, servername: url.hostname.replace(/^\[|\]$/g, "") });
      const req = nodeHttps().request({
        host: url.hostname,
        port,
        method: "GET",
        path: `${url.pathname}${url.search}`,
        createConnection: () => secure,
        timeout,
      });
      req.on("response", resolve);
      req.on("timeout", () => req.destroy(new Error("timed out")));
      req.on("error", (error) => reject(failed(error)));
      req.end();
    });
    tunnel.end();
  });
}

function readCapped(answer: IncomingMessage, maxBytes: number, target: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    answer.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        answer.destroy();
        reject(new UserError("remote-base-too-large", `${target}: more than ${maxBytes} bytes`));
      } else chunks.push(chunk);
    });
    answer.on("end", () => resolve(Buffer.concat(chunks)));
    answer.on("error", (error) =>
      reject(new UserError("remote-base-fetch-failed", `${target}: ${error.message}`, { cause: error })),
    );
  });
}
