import { Counter, collectDefaultMetrics, Registry } from "prom-client";

/** The server's Prometheus registry: process defaults plus Ferry's counters (no repository names in labels). */
export interface ServerMetrics {
  registry: Registry;
  pullRequests: Counter<"action">;
  hintsReceived: Counter;
  scans: Counter;
}

export function createServerMetrics(): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    pullRequests: new Counter({
      name: "ferry_pull_requests_total",
      help: "Ferry PRs opened or updated",
      labelNames: ["action"],
      registers: [registry],
    }),
    hintsReceived: new Counter({
      name: "ferry_registry_hints_total",
      help: "Registry hints received (after coalescing)",
      registers: [registry],
    }),
    scans: new Counter({ name: "ferry_scans_total", help: "Periodic scans run", registers: [registry] }),
  };
}
