/**
 * A loopback relay in front of a registry that times it, for the benches that take the registry's
 * own time off a command's wall time (startup.ts, plan-renovate.ts).
 */
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";

export interface TimingRelay {
  /** `127.0.0.1:<port>`: the registry's host as clients name it. */
  host: string;
  reset: () => void;
  busyMs: () => number;
  /** Requests answered since the last reset. */
  requests: () => number;
  close: () => Promise<void>;
}

/**
 * A loopback relay in front of the registry that records when each request arrived and when its
 * answer was sent: `busyMs` is the time at least one request was with the registry (the union
 * of those intervals, so concurrent requests count once).
 */
export async function startTimingRelay(upstream: URL): Promise<TimingRelay> {
  let spans: [number, number][] = [];
  let requests = 0;
  const server = createServer((incoming, outgoing) => {
    const started = performance.now();
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, host: upstream.host },
      },
      (response) => {
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(outgoing);
        outgoing.on("finish", () => spans.push([started, performance.now()]));
        requests += 1;
      },
    );
    forward.on("error", () => outgoing.destroy());
    incoming.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    reset: () => {
      spans = [];
      requests = 0;
    },
    requests: () => requests,
    busyMs: () => {
      let total = 0;
      let end = Number.NEGATIVE_INFINITY;
      for (const [from, to] of [...spans].sort((a, b) => a[0] - b[0])) {
        if (to <= end) continue;
        total += to - Math.max(from, end);
        end = to;
      }
      return total;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
