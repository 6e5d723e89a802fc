import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An HTTP proxy in front of a registry (real or embedded) that adds what distribution 2.8 does
 * not do — paginated, sorted `tags/list` with `Link` headers, huge generated tag lists — and
 * injects faults: 429s, 5xx, hangs, 401s mid-walk, corrupted digests, bodies and content types.
 * Authorization passes through untouched, so auth works as it does on the registry behind it.
 */
export interface ProxiedRequest {
  method: string;
  path: string;
  search: string;
  authorized: boolean;
}

export type FaultAction =
  | { kind: "respond"; status: number; headers?: Record<string, string>; body?: string }
  /** 401 with the last challenge the registry sent (what an expired token gets). */
  | { kind: "unauthorized" }
  /** Accept the connection and never answer. */
  | { kind: "hang" }
  /** Forward, then alter the answer. */
  | { kind: "alter"; digestHeader?: string; contentType?: string; flipBodyByte?: boolean; body?: string };

export interface Fault {
  method?: string;
  /** Matches the path, e.g. /\/tags\/list$/. */
  path: RegExp;
  action: FaultAction;
  /** How many matching requests it applies to (default 1). */
  times?: number;
  /** Let this many matching requests through first (e.g. fail the second page of a walk). */
  after?: number;
}

export type PaginationMode = {
  pageSize: number;
  link?: "relative" | "absolute";
  loop?: boolean;
  shortFirstPage?: boolean;
};

export interface FaultProxy {
  url: string;
  host: string;
  requests: ProxiedRequest[];
  inject(fault: Fault): void;
  paginate(mode: PaginationMode | undefined): void;
  /** Serve these tags for the repository instead of the registry's (auth still checked upstream). */
  overrideTags(repository: string, tags: string[] | undefined): void;
  reset(): void;
  close(): Promise<void>;
}

const FORWARDED_RESPONSE_HEADERS = [
  "content-type",
  "docker-content-digest",
  "www-authenticate",
  "link",
  "location",
  "retry-after",
  "docker-distribution-api-version",
];

export async function startFaultProxy(upstream: string): Promise<FaultProxy> {
  let faults: (Fault & { remaining: number; skip: number })[] = [];
  let pagination: PaginationMode | undefined;
  const overrides = new Map<string, string[]>();
  const requests: ProxiedRequest[] = [];
  let lastChallenge = "";
  let baseUrl = "";

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(502).end(String(error));
      else res.destroy();
    });
  });

  async function forward(
    req: IncomingMessage,
    pathAndQuery: string,
  ): Promise<{ status: number; headers: Headers; body: Buffer }> {
    const headers: Record<string, string> = {};
    for (const name of ["authorization", "accept", "content-type"]) {
      const value = req.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
    const response = await fetch(`${upstream}${pathAndQuery}`, {
      method: req.method ?? "GET",
      headers,
      redirect: "manual",
      ...(body ? { body } : {}),
    });
    const challenge = response.headers.get("www-authenticate");
    if (challenge) lastChallenge = challenge;
    return {
      status: response.status,
      headers: response.headers,
      body: Buffer.from(await response.arrayBuffer()),
    };
  }

  function send(
    res: ServerResponse,
    status: number,
    headers: Record<string, string>,
    body: Buffer | string,
    head: boolean,
  ): void {
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    res.writeHead(status, { ...headers, "content-length": String(bytes.length) });
    res.end(head ? undefined : bytes);
  }

  function pickHeaders(headers: Headers): Record<string, string> {
    const picked: Record<string, string> = {};
    for (const name of FORWARDED_RESPONSE_HEADERS) {
      const value = headers.get(name);
      if (value !== null) picked[name] = value;
    }
    return picked;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://proxy.invalid");
    const method = req.method ?? "GET";
    const head = method === "HEAD";
    requests.push({
      method,
      path: url.pathname,
      search: url.search,
      authorized: req.headers.authorization !== undefined,
    });
    let fault = faults.find(
      (candidate) =>
        candidate.remaining > 0 &&
        candidate.path.test(url.pathname) &&
        (!candidate.method || candidate.method === method),
    );
    if (fault && fault.skip > 0) {
      fault.skip -= 1;
      fault = undefined;
    }
    // Alterations wait for a successful answer, so an auth round trip does not use them up.
    if (fault && fault.action.kind !== "alter") fault.remaining -= 1;
    const action = fault?.action;
    if (action?.kind === "hang") return; // the socket stays open until the client gives up
    if (action?.kind === "respond") {
      send(res, action.status, action.headers ?? {}, action.body ?? "", head);
      return;
    }
    if (action?.kind === "unauthorized") {
      send(
        res,
        401,
        { "content-type": "application/json", "www-authenticate": lastChallenge || 'Basic realm="proxy"' },
        JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message: "token expired" }] }),
        head,
      );
      return;
    }
    const tagsMatch = /^\/v2\/(.+)\/tags\/list$/.exec(url.pathname);
    if (tagsMatch && method === "GET" && (pagination || overrides.has(tagsMatch[1]!))) {
      const upstreamAnswer = await forward(req, url.pathname);
      if (upstreamAnswer.status !== 200) {
        send(res, upstreamAnswer.status, pickHeaders(upstreamAnswer.headers), upstreamAnswer.body, head);
        return;
      }
      const all =
        overrides.get(tagsMatch[1]!) ??
        (JSON.parse(upstreamAnswer.body.toString("utf8")) as { tags: string[] | null }).tags ??
        [];
      const sorted = overrides.has(tagsMatch[1]!) ? all : [...all].sort();
      const headers: Record<string, string> = { "content-type": "application/json" };
      let page = sorted;
      if (pagination) {
        const last = url.searchParams.get("last");
        const start = last === null ? 0 : sortedIndexAfter(sorted, last);
        const size =
          pagination.shortFirstPage && last === null
            ? Math.max(1, Math.floor(pagination.pageSize / 3))
            : pagination.pageSize;
        page = sorted.slice(start, start + size);
        if (start + size < sorted.length) {
          // A loop: the second page links back to the first.
          const nextLast = pagination.loop && last !== null ? undefined : page[page.length - 1]!;
          const query = `n=${pagination.pageSize}${nextLast === undefined ? "" : `&last=${encodeURIComponent(nextLast)}`}`;
          const target =
            pagination.loop && last !== null
              ? `${url.pathname}?n=${pagination.pageSize}`
              : `${url.pathname}?${query}`;
          headers.link = `<${pagination.link === "absolute" ? `${baseUrl}${target}` : target}>; rel="next"`;
        }
      }
      send(res, 200, headers, JSON.stringify({ name: tagsMatch[1], tags: page }), head);
      return;
    }
    const answer = await forward(req, `${url.pathname}${url.search}`);
    const headers = pickHeaders(answer.headers);
    let body = answer.body;
    if (action?.kind === "alter" && answer.status === 200) {
      fault!.remaining -= 1;
      if (action.digestHeader !== undefined) headers["docker-content-digest"] = action.digestHeader;
      if (action.contentType !== undefined) headers["content-type"] = action.contentType;
      if (action.body !== undefined) body = Buffer.from(action.body);
      if (action.flipBodyByte && body.length > 0) {
        body = Buffer.from(body);
        body[body.length - 2] = body[body.length - 2] === 0x20 ? 0x0a : 0x20;
      }
    }
    if (head) {
      res.writeHead(answer.status, {
        ...headers,
        ...(answer.headers.get("content-length")
          ? { "content-length": answer.headers.get("content-length")! }
          : {}),
      });
      res.end();
      return;
    }
    send(res, answer.status, headers, body, false);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}`;
  return {
    url: baseUrl,
    host: `127.0.0.1:${port}`,
    requests,
    inject(fault) {
      faults.push({ ...fault, remaining: fault.times ?? 1, skip: fault.after ?? 0 });
    },
    paginate(mode) {
      pagination = mode;
    },
    overrideTags(repository, tags) {
      if (tags) overrides.set(repository, [...tags].sort());
      else overrides.delete(repository);
    },
    reset() {
      faults = [];
      pagination = undefined;
      overrides.clear();
      requests.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Index of the first tag sorting after `last` (distribution's `last` is exclusive). */
function sortedIndexAfter(sorted: string[], last: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]! <= last) low = mid + 1;
    else high = mid;
  }
  return low;
}
