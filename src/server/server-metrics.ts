import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";

/** The server's Prometheus registry: process defaults plus Ferry's counters (no repository names in labels). */
export interface ServerMetrics {
  registry: Registry;
  pullRequests: Counter<"action">;
  hintsReceived: Counter;
  scans: Counter;
  /** Notifications by outcome (sent, failed, dropped, duplicate) and target name (an operator's word, never a URL). */
  notifications: Counter<"outcome" | "target">;
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
    help: "Bytes received of webhook request bodies being read or handled",
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
    notifications: new Counter({
      name: "ferry_notifications_total",
      help: "Notifications by outcome: sent, failed (attempts or time spent), dropped (queue full), duplicate (claimed elsewhere)",
      labelNames: ["outcome", "target"],
      registers: [registry],
    }),
  };
}

/** Members, shard size and scan lag as Prometheus gauges, read at scrape time. */
export function registerScanGauges(
  registry: Registry,
  scanState: { shardSize(): number; lagSeconds(now: number): number; viewChanges(): number },
  membership: { members(): string[] },
): void {
  new Gauge({
    name: "ferry_scan_members",
    help: "Live members sharing the periodic scan (0: this replica lost its Lease)",
    registers: [registry],
    collect() {
      this.set(membership.members().length);
    },
  });
  new Gauge({
    name: "ferry_scan_shard_installations",
    help: "Installations this replica covered in its last scan round",
    registers: [registry],
    collect() {
      this.set(scanState.shardSize());
    },
  });
  new Gauge({
    name: "ferry_scan_view_changes",
    help: "Scan rounds of this replica that saw the member list change (at their start, during them, or cut off)",
    registers: [registry],
    collect() {
      this.set(scanState.viewChanges());
    },
  });
  new Gauge({
    name: "ferry_scan_lag_seconds",
    help: "Oldest time since an installation of this replica's shard was last scanned",
    registers: [registry],
    collect() {
      this.set(scanState.lagSeconds(Date.now()));
    },
  });
}

/** Each registry's budget use on this replica (its share of the fleet's), read at scrape time. */
export function registerBudgetGauges(
  registry: Registry,
  use: () => Record<string, { used: number; limit: number }>,
): void {
  new Gauge({
    name: "ferry_registry_budget_used",
    help: "Registry requests this replica started in the last minute",
    labelNames: ["registry"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [name, entry] of Object.entries(use())) this.set({ registry: name }, entry.used);
    },
  });
  new Gauge({
    name: "ferry_registry_budget_limit",
    help: "This replica's share of the registry request budget per minute",
    labelNames: ["registry"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [name, entry] of Object.entries(use())) this.set({ registry: name }, entry.limit);
    },
  });
}
