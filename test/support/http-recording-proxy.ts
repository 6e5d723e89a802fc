/**
 * A loopback HTTP relay that records every request passing through (method, path, Authorization
 * and when), so a test can tell which of several replicas sharing one upstream sent what.
 */
import { createServer, request, type IncomingHttpHeaders } from "node:http";

export interface RecordedExchange {
  method: string;
  path: string;
  authorization: string | undefined;
  at: number;
}

export interface HttpRecordingProxy {
  url: string;
  recorded: RecordedExchange[];
  close(): Promise<void>;
}

export async function startHttpRecordingProxy(target: string): Promise<HttpRecordingProxy> {
  const upstream = new URL(target);
  const recorded: RecordedExchange[] = [];
  let origin = "";
  const server = createServer((req, res) => {
    const headers: IncomingHttpHeaders = { ...req.headers, host: upstream.host };
    const auth = req.headers.authorization;
    recorded.push({
      method: req.method ?? "GET",
      path: req.url ?? "/",
      authorization: Array.isArray(auth) ? auth[0] : auth,
      at: Date.now(),
    });
    const forward = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      (answer) => {
        // Pagination links name the upstream: point them back through the relay.
        const link = answer.headers.link;
        if (typeof link === "string") answer.headers.link = link.split(upstream.origin).join(origin);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on("error", () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  origin = `http://127.0.0.1:${port}`;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname.replace(/\/$/, "")}`,
    recorded,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
