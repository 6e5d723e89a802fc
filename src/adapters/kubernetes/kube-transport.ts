/**
 * Requests to one API server on Node's own HTTP/2 and HTTP/1.1 clients: one connection for every
 * request of the process (HTTP/2 streams side by side, as kube-apiserver over TLS speaks; one
 * keep-alive socket in turn over plain HTTP or where the server offers no HTTP/2) and one for the
 * watches, which hold a response open (docs/architecture.md "Ports"). Every
 * request has a deadline, and a connection whose request got no answer in time is left for a new
 * one; every answer is bounded in size before it is read.
 */
import type http from "node:http";
import type { IncomingHttpHeaders } from "node:http";
import type { ClientHttp2Session, ClientHttp2Stream } from "node:http2";
import type https from "node:https";
import type { Socket } from "node:net";
import type { Readable } from "node:stream";
import type tls from "node:tls";
import { nodeHttp, nodeHttp2, nodeHttps, nodeTls } from "../http/node-http.js";
import type { ClusterAccess, Credentials } from "./cluster-access.js";

export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** A list page of 500 objects of at most 1.5 MiB each stays under this; anything bigger is refused. */
export const MAX_ANSWER_BYTES = 256 * 1024 * 1024;

/** An answer outside 2xx: the status and the body (parsed when it is JSON). */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: unknown,
  ) {
    const message = (body as { message?: unknown } | undefined)?.message;
    super(typeof message === "string" ? `HTTP ${code}: ${message}` : `HTTP ${code}`);
    this.name = "KubeApiError";
  }
}

/** The HTTP status of a failed request, if the API server answered at all. */
export function statusOf(error: unknown): number | undefined {
  return error instanceof KubeApiError ? error.code : undefined;
}

/** A request the API server did not answer in time. */
export class RequestTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`no answer from the API server within ${Math.round(timeoutMs / 100) / 10} s`);
    this.name = "RequestTimeoutError";
  }
}

/** What a connection carries: plain requests share one, watches another. */
export type ConnectionUse = "requests" | "watches";

export interface KubeRequest {
  method: "GET" | "PATCH" | "PUT" | "POST" | "DELETE";
  /** The API path, e.g. `/api/v1/namespaces/shop/configmaps/web`. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: string;
  contentType?: string;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

/** How a connection opens and what it costs to keep: HTTP/2 sessions or a keep-alive agent. */
interface Connection {
  send(
    headers: Record<string, string>,
    request: KubeRequest,
    path: string,
    signal: AbortSignal,
  ): Promise<Answer>;
  close(): void;
}

const NO_HTTP2 = new Set(["ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL", "ERR_HTTP2_ERROR"]);

/** `work`, or the signal's reason once it aborts first (the work goes on, unwatched). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

class Http2Connection implements Connection {
  private session: Promise<ClientHttp2Session> | undefined;
  /** Streams open on each session: a session with none does not hold the process open. */
  private readonly streams = new WeakMap<ClientHttp2Session, number>();

  constructor(
    private readonly origin: string,
    private readonly tlsOptions: tls.ConnectionOptions,
    private readonly tunnel: (() => Promise<Socket>) | undefined,
  ) {}

  /** The open session, or a new one once it has connected (a refused handshake is its error). */
  private open(): Promise<ClientHttp2Session> {
    if (this.session) return this.session;
    const forget = () => {
      if (this.session === opening) this.session = undefined;
    };
    const opening = this.connect(forget);
    opening.catch(forget);
    this.session = opening;
    return opening;
  }

  private async connect(forget: () => void): Promise<ClientHttp2Session> {
    const socket = this.tunnel ? await this.tunnel() : undefined;
    const session = nodeHttp2().connect(this.origin, {
      ...this.tlsOptions,
      ...(socket
        ? { createConnection: () => nodeTls().connect({ ...this.tlsOptions, socket, ALPNProtocols: ["h2"] }) }
        : {}),
    });
    const settled = new Promise<ClientHttp2Session>((resolve, reject) => {
      session.once("connect", () => {
        if (!this.streams.get(session)) session.unref();
        resolve(session);
      });
      session.once("error", reject);
      // A connection cut before the handshake ends may close with no error of its own.
      session.once("close", () =>
        reject(new Error("the connection to the API server closed before it was established")),
      );
    });
    session.on("error", forget);
    session.on("close", forget);
    session.on("goaway", forget);
    return settled;
  }

  private count(session: ClientHttp2Session, change: 1 | -1): void {
    const open = (this.streams.get(session) ?? 0) + change;
    this.streams.set(session, open);
    // Idle, the session does not hold the process open; a request in flight does.
    if (open === 1 && change === 1) session.ref();
    if (open === 0 && !session.destroyed) session.unref();
  }

  async send(headers: Record<string, string>, request: KubeRequest, path: string, signal: AbortSignal) {
    // The deadline holds while connecting too: a server that never answers the handshake.
    let session = await untilAborted(this.open(), signal);
    if (session.closed || session.destroyed) {
      // It began to close (GOAWAY) after it was handed out: the request goes to a new one.
      this.close();
      session = await untilAborted(this.open(), signal);
    }
    this.count(session, 1);
    let stream: ClientHttp2Stream;
    try {
      stream = session.request({ ":method": request.method, ":path": path, ...headers }, { signal });
    } catch (error) {
      this.count(session, -1);
      this.close();
      throw error;
    }
    stream.once("close", () => this.count(session, -1));
    stream.end(request.body);
    return new Promise<Answer>((resolve, reject) => {
      stream.once("error", reject);
      // Closed with no answer and no error of its own (its session cut, or aborted): no answer comes.
      stream.once("close", () =>
        reject(
          signal.aborted
            ? (signal.reason as Error)
            : new Error("the connection to the API server closed before it answered"),
        ),
      );
      stream.once("response", (answer) =>
        resolve({ status: Number(answer[":status"]), headers: answer as IncomingHttpHeaders, body: stream }),
      );
    });
  }

  close(): void {
    const session = this.session;
    this.session = undefined;
    // Streams still open finish or meet their own deadlines; new ones go to a new session.
    void session?.then((open) => open.close()).catch(() => {});
  }
}

class Http1Connection implements Connection {
  private agent: http.Agent;

  constructor(
    private readonly secure: boolean,
    private readonly target: { host: string; port: string },
    private readonly agentOptions: https.AgentOptions,
  ) {
    this.agent = this.newAgent();
  }

  private newAgent(): http.Agent {
    return this.secure
      ? new (nodeHttps().Agent)(this.agentOptions)
      : new (nodeHttp().Agent)(this.agentOptions);
  }

  send(headers: Record<string, string>, request: KubeRequest, path: string, signal: AbortSignal) {
    return new Promise<Answer>((resolve, reject) => {
      const send = this.secure ? nodeHttps().request : nodeHttp().request;
      const outgoing = send(
        { ...this.target, path, method: request.method, headers, agent: this.agent, signal },
        (incoming) =>
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body: incoming }),
      );
      outgoing.once("error", reject);
      outgoing.end(request.body);
    });
  }

  close(): void {
    const old = this.agent;
    this.agent = this.newAgent();
    old.destroy();
  }
}

async function readBounded(body: Readable, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      body.destroy();
      throw new Error(`the API server's answer is larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parsedBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Opens a CONNECT tunnel through an http(s) proxy to `host:port`. */
function connectTunnel(proxyUrl: string, host: string, port: string): () => Promise<Socket> {
  return () =>
    new Promise((resolve, reject) => {
      const proxy = new URL(proxyUrl);
      const send = proxy.protocol === "https:" ? nodeHttps().request : nodeHttp().request;
      const authority = `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`;
      const auth = proxy.username
        ? {
            "proxy-authorization": `Basic ${Buffer.from(
              `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`,
            ).toString("base64")}`,
          }
        : {};
      const outgoing = send({
        host: proxy.hostname,
        port: proxy.port || (proxy.protocol === "https:" ? 443 : 80),
        method: "CONNECT",
        path: authority,
        headers: { host: authority, ...auth },
      });
      outgoing.once("connect", (answer, socket) => {
        if (answer.statusCode === 200) resolve(socket);
        else {
          socket.destroy();
          reject(new Error(`the proxy refused the tunnel to ${authority}: HTTP ${answer.statusCode}`));
        }
      });
      outgoing.once("error", reject);
      outgoing.end();
    });
}

export class KubeTransport {
  private readonly connections = new Map<string, Connection>();
  private readonly base: URL;
  /** Set once the server refused HTTP/2: its connections are HTTP/1.1 from then on. */
  private http1Only: boolean;

  constructor(
    private readonly access: ClusterAccess,
    readonly timeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
    private readonly maxAnswerBytes = MAX_ANSWER_BYTES,
  ) {
    this.base = new URL(access.server);
    this.http1Only = this.base.protocol === "http:";
    if (access.proxyUrl !== undefined && !/^https?:\/\//.test(access.proxyUrl))
      throw new Error(
        `proxy-url ${access.proxyUrl} is not an http(s) proxy, the only kind Ferry tunnels through`,
      );
  }

  private connection(use: ConnectionUse, credentials: Credentials): Connection {
    const h1 = this.http1Only;
    // Credentials enter the key only as the certificate's identity: a rotated one opens anew.
    const key = `${use}:${h1 ? 1 : 2}:${String(credentials.cert ?? "")}`;
    let connection = this.connections.get(key);
    if (connection) return connection;
    const tlsOptions: tls.ConnectionOptions = {
      ...(this.access.ca ? { ca: this.access.ca } : {}),
      ...(credentials.cert ? { cert: credentials.cert } : {}),
      ...(credentials.key ? { key: credentials.key } : {}),
      rejectUnauthorized: this.access.rejectUnauthorized,
      ...(this.access.servername ? { servername: this.access.servername } : {}),
    };
    const port = this.base.port || (this.base.protocol === "https:" ? "443" : "80");
    if (h1) {
      if (this.access.proxyUrl)
        throw new Error(
          "proxy-url: Ferry tunnels only to an https:// API server that speaks HTTP/2, as kube-apiserver does",
        );
      connection = new Http1Connection(
        this.base.protocol === "https:",
        { host: this.base.hostname.replace(/^\[|\]$/g, ""), port },
        {
          ...tlsOptions,
          keepAlive: true,
          // Requests: one socket, in turn; watches: one each while open.
          ...(use === "requests" ? { maxSockets: 1 } : {}),
        },
      );
    } else {
      const hostname = this.base.hostname.replace(/^\[|\]$/g, "");
      connection = new Http2Connection(
        this.base.origin,
        tlsOptions,
        this.access.proxyUrl ? connectTunnel(this.access.proxyUrl, hostname, port) : undefined,
      );
    }
    // One identity per use: a rotated client certificate (an exec plugin's) retires the old one.
    for (const [other, known] of this.connections) if (other.startsWith(`${use}:`)) this.forget(known);
    this.connections.set(key, connection);
    return connection;
  }

  private forget(connection: Connection): void {
    for (const [key, known] of this.connections) if (known === connection) this.connections.delete(key);
    connection.close();
  }

  private pathOf(request: KubeRequest): string {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query ?? {}))
      if (value !== undefined) query.set(name, String(value));
    const search = query.toString();
    return `${this.base.pathname.replace(/\/+$/, "")}${request.path}${search ? `?${search}` : ""}`;
  }

  private async open(request: KubeRequest, use: ConnectionUse, signal: AbortSignal): Promise<Answer> {
    const credentials = await this.access.credentials();
    const headers: Record<string, string> = { accept: "application/json" };
    if (credentials.authorization) headers.authorization = credentials.authorization;
    if (request.contentType) headers["content-type"] = request.contentType;
    const connection = this.connection(use, credentials);
    try {
      return await connection.send(headers, request, this.pathOf(request), signal);
    } catch (error) {
      const code = (error as { code?: string }).code ?? "";
      if (connection instanceof Http2Connection && NO_HTTP2.has(code)) {
        // A server (or a proxy in front of it) that speaks only HTTP/1.1: the same request over it.
        this.http1Only = true;
        this.forget(connection);
        return this.open(request, use, signal);
      }
      throw error;
    }
  }

  /** One request under the deadline; the answer's JSON (or text) when 2xx, else a KubeApiError. */
  async request(request: KubeRequest): Promise<unknown> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      const answer = await this.open(request, "requests", signal);
      const text = await readBounded(answer.body, this.maxAnswerBytes);
      if (answer.status >= 200 && answer.status <= 299) return parsedBody(text);
      throw new KubeApiError(answer.status, parsedBody(text));
    } catch (error) {
      if (signal.aborted && !(error instanceof KubeApiError)) {
        // Its connection may have gone silent for good: the next request opens a new one.
        for (const [key, known] of this.connections) if (key.startsWith("requests:")) this.forget(known);
        throw new RequestTimeoutError(this.timeoutMs);
      }
      throw error;
    }
  }

  /**
   * A watch: the answer's body as it streams, on the watches' connection, until `signal` aborts it
   * or the server ends it. A non-2xx answer is a KubeApiError.
   */
  async stream(request: KubeRequest, signal: AbortSignal): Promise<Readable> {
    const answer = await this.open(request, "watches", signal);
    if (answer.status >= 200 && answer.status <= 299) return answer.body;
    throw new KubeApiError(answer.status, parsedBody(await readBounded(answer.body, 1024 * 1024)));
  }

  /** Closes every connection (requests in flight end with an error). */
  close(): void {
    for (const connection of [...this.connections.values()]) this.forget(connection);
  }
}
