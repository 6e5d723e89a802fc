/**
 * The server-wide budget of webhook intake (docs/security.md "Webhook intake"): what unauthenticated
 * senders can make the process hold. A body holds the bytes it has actually sent (never what it
 * declared) until its response ends; one source address holds at most a share of those bytes and a
 * bounded number of connections; and a body must keep up a minimum transfer rate once it has
 * started, so that slow senders cannot hold the budget however many of them there are. An HMAC
 * cannot be checked before the body has arrived, so no header earns a sender a reserve: the
 * budget is shared out by what senders do, not by what they claim.
 */
import { parseIPv4, parseIPv6 } from "../core/net-address.js";
import { RequestRefusal } from "./request-refusal.js";

export interface IntakeLimits {
  /** Bytes of request bodies held at once across every route (default 64 MiB). */
  maxInFlightBytes?: number;
  /** Bytes of request bodies one source address holds at once (default half of maxInFlightBytes). */
  maxInFlightBytesPerSource?: number;
  /** Open connections from one source address (IPv4 address, IPv6 /64; default 32). */
  maxConnectionsPerSource?: number;
  /** Milliseconds a connection has to send a request's headers (default 10 s). */
  headerTimeoutMs?: number;
  /** Milliseconds a whole request may take, headers and body (default 30 s). */
  requestTimeoutMs?: number;
  /** Bytes per second a body must average once its grace period is over (default 1 KiB/s). */
  minBytesPerSecond?: number;
  /** Milliseconds a body may take before the minimum rate applies (default 5 s). */
  rateGraceMs?: number;
  /** Seconds a refused sender is asked to wait (`Retry-After`, default 5). */
  retryAfterSeconds?: number;
  /** Tests inject the clock the minimum rate is measured with. */
  now?: () => number;
}

export const INTAKE_DEFAULTS = {
  maxInFlightBytes: 64 * 1024 * 1024,
  maxConnectionsPerSource: 32,
  headerTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  minBytesPerSecond: 1024,
  rateGraceMs: 5_000,
  retryAfterSeconds: 5,
} as const;

/** One body's hold on the budget, from its first byte to the end of its response. */
export interface Admission {
  /** Holds `more` received bytes; false when the budget or the source's share has no room left. */
  grow(more: number): boolean;
  /** True when the body has fallen below the minimum rate (`declared`: its Content-Length, if any). */
  tooSlow(declared: number | undefined): boolean;
  release(): void;
}

export class IntakeBudget {
  readonly maxInFlightBytes: number;
  readonly maxInFlightBytesPerSource: number;
  readonly maxConnectionsPerSource: number;
  readonly headerTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly minBytesPerSecond: number;
  readonly rateGraceMs: number;
  readonly retryAfterSeconds: number;
  private readonly now: () => number;
  private bytes = 0;
  private bodies = 0;
  private readonly sourceBytes = new Map<string, number>();
  private readonly sourceConnections = new Map<string, number>();

  constructor(limits: IntakeLimits = {}) {
    this.maxInFlightBytes = limits.maxInFlightBytes ?? INTAKE_DEFAULTS.maxInFlightBytes;
    this.maxInFlightBytesPerSource =
      limits.maxInFlightBytesPerSource ?? Math.floor(this.maxInFlightBytes / 2);
    this.maxConnectionsPerSource = limits.maxConnectionsPerSource ?? INTAKE_DEFAULTS.maxConnectionsPerSource;
    this.headerTimeoutMs = limits.headerTimeoutMs ?? INTAKE_DEFAULTS.headerTimeoutMs;
    this.requestTimeoutMs = Math.max(
      this.headerTimeoutMs,
      limits.requestTimeoutMs ?? INTAKE_DEFAULTS.requestTimeoutMs,
    );
    this.minBytesPerSecond = limits.minBytesPerSecond ?? INTAKE_DEFAULTS.minBytesPerSecond;
    this.rateGraceMs = limits.rateGraceMs ?? INTAKE_DEFAULTS.rateGraceMs;
    this.retryAfterSeconds = limits.retryAfterSeconds ?? INTAKE_DEFAULTS.retryAfterSeconds;
    this.now = limits.now ?? (() => Date.now());
  }

  /** Bytes received and bodies being read or handled now (metrics and tests). */
  get inFlight(): { bytes: number; bodies: number } {
    return { bytes: this.bytes, bodies: this.bodies };
  }

  /** Bytes held by bodies from `source` now (tests). */
  heldBy(source: string): number {
    return this.sourceBytes.get(source) ?? 0;
  }

  /** A connection from `source`: its release, or undefined when the source has its share open. */
  openConnection(source: string): (() => void) | undefined {
    const open = this.sourceConnections.get(source) ?? 0;
    if (open >= this.maxConnectionsPerSource) return undefined;
    this.sourceConnections.set(source, open + 1);
    let closed = false;
    return () => {
      if (closed) return;
      closed = true;
      const left = (this.sourceConnections.get(source) ?? 1) - 1;
      if (left > 0) this.sourceConnections.set(source, left);
      else this.sourceConnections.delete(source);
    };
  }

  /** A hold for one body from `source`, or undefined when the budget or the source's share is spent. */
  admit(source: string): Admission | undefined {
    if (this.bytes >= this.maxInFlightBytes || this.heldBy(source) >= this.maxInFlightBytesPerSource)
      return undefined;
    this.bodies++;
    const startedAt = this.now();
    let held = 0;
    let released = false;
    const add = (delta: number): void => {
      this.bytes += delta;
      held += delta;
      const left = this.heldBy(source) + delta;
      if (left > 0) this.sourceBytes.set(source, left);
      else this.sourceBytes.delete(source);
    };
    return {
      grow: (more) => {
        if (released) return false;
        if (this.bytes + more > this.maxInFlightBytes) return false;
        if (this.heldBy(source) + more > this.maxInFlightBytesPerSource) return false;
        add(more);
        return true;
      },
      tooSlow: (declared) => {
        const late = this.now() - startedAt - this.rateGraceMs;
        if (late <= 0) return false;
        const owed = Math.ceil((late / 1000) * this.minBytesPerSecond);
        return held < (declared === undefined ? owed : Math.min(declared, owed));
      },
      release: () => {
        if (released) return;
        released = true;
        this.bodies--;
        add(-held);
      },
    };
  }

  busy(midBody = false): RequestRefusal {
    return new RequestRefusal(
      503,
      "too many requests in flight; retry later",
      { "retry-after": String(this.retryAfterSeconds) },
      midBody,
    );
  }
}

/**
 * Whose share a connection uses: its IPv4 address (IPv4-mapped IPv6 included), or the /64 of an
 * IPv6 address (one host usually holds a whole /64).
 */
export function sourceOf(address: string | undefined): string {
  if (address === undefined) return "unknown";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (parseIPv4(address) !== undefined) return address;
  const bytes = parseIPv6(address.replace(/%.*$/, ""));
  if (!bytes) return address;
  const groups = [];
  for (let i = 0; i < 8; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return `${groups.join(":")}::/64`;
}
