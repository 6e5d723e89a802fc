import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";

/** The server's Prometheus registry: process defaults plus Ferry's counters (no repository names in labels). */
export interface ServerMetrics {
  registry: Registry;
  pullRequests: Counter<"action">;
  hintsReceived: Counter;
  scans: Counter;
}

/** Webhook bodies in flight against the intake budget (read at scrape time). */
export function registerIntakeGauges(
  registry: Registry,
  inFlight: () => { bytes: number; bodies: number },
): void {
  new Gauge({
    name: "ferry_webhook_bodies_in_flight",
    help: "Webhook request bodies being read or handled",
    registers: [registry],
    collect() {
      this.set(inFlight().bodies);
    },
  });
  new Gauge({
    name: "ferry_webhook_body_bytes_in_flight",
    help: "Bytes reserved by webhook request bodies being read or handled",
    registers: [registry],
    collect() {
      this.set(inFlight().bytes);
    },
  });
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
