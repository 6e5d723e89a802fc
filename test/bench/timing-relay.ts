/**
 * A loopback relay in front of a registry: it counts and times the requests it forwards, for the
 * benches that take the registry's own time off a command's wall time (startup.ts,
 * plan-renovate.ts), and can hold each one a while first, for a registry at a distance (plan.ts).
 */
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";

export interface TimingRelay {
  /** `127.0.0.1:<port>`: the registry's host as clients name it. */
  host: string;
  reset: () => void;
  /**
   * The time at least one request was with the registry since the last reset: from its arrival to
   * its answer sent, the union of those intervals (concurrent requests count once).
   */
  busyMs: () => number;
  /** Requests answered since the last reset. */
  requests: () => number;
  /** From now on each request waits `ms` before it is forwarded (0 at the start). */
  setLatency: (ms: number) => void;
  close: () => Promise<void>;
}

export async function startTimingRelay(upstream: URL, latencyMs = 0): Promise<TimingRelay> {
  let spans: [number, number][] = [];
  let requests = 0;
  const server = createServer((incoming, outgoing) => {
    const started = performance.now();
    const forward = () => {
      const outbound = httpRequest(
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
      outbound.on("error", () => outgoing.destroy());
      incoming.pipe(outbound);
    };
    if (latencyMs > 0) setTimeout(forward, latencyMs);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    reset: () => {
      spans = [];
      requests = 0;
    },
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
    requests: () => requests,
    setLatency: (ms) => {
      latencyMs = ms;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
