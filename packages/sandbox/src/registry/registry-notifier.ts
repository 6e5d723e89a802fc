import { randomUUID } from "node:crypto";

export interface NotificationEndpoint {
  url: string;
  /** Static headers sent with every delivery, e.g. `Authorization` (distribution `endpoints[].headers`). */
  headers?: Record<string, string>;
}

/** One event in distribution's notification envelope (docs: distribution/docs/about/notifications.md). */
export interface DistributionEvent {
  id: string;
  timestamp: string;
  action: "push" | "pull" | "delete" | "mount";
  target: {
    mediaType?: string;
    size?: number;
    digest?: string;
    length?: number;
    repository: string;
    url?: string;
    tag?: string;
  };
  request: { id: string; addr: string; host: string; method: string; useragent: string };
  actor: { name?: string };
  source: { addr: string; instanceID: string };
}

export const EVENTS_MEDIA_TYPE = "application/vnd.docker.distribution.events.v1+json";

export interface NotifierOptions {
  /** Attempts per envelope before it is dropped (distribution retries forever; tests need an end). */
  maxAttempts?: number;
  /** First retry delay; doubles on each failure up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Per-attempt timeout, like distribution's `endpoints[].timeout`. */
  timeoutMs?: number;
}

interface EndpointQueue {
  endpoint: NotificationEndpoint;
  pending: DistributionEvent[][];
  running: Promise<void> | undefined;
}

/**
 * Delivers event envelopes to every endpoint, in order, one endpoint queue each, retrying failed
 * deliveries (non-2xx/3xx or network errors) with exponential backoff. Never blocks the caller:
 * `enqueue` returns at once, as distribution's broadcaster does.
 */
export class RegistryNotifier {
  readonly instanceId = randomUUID();
  private readonly queues: EndpointQueue[] = [];
  private closed = false;
  private readonly abort = new AbortController();
  private delivered = 0;
  private failedAttempts = 0;

  constructor(
    endpoints: NotificationEndpoint[],
    private readonly options: NotifierOptions = {},
  ) {
    for (const endpoint of endpoints) this.addEndpoint(endpoint);
  }

  addEndpoint(endpoint: NotificationEndpoint): void {
    this.queues.push({ endpoint: { ...endpoint }, pending: [], running: undefined });
  }

  enqueue(events: DistributionEvent[]): void {
    if (this.closed || events.length === 0) return;
    for (const queue of this.queues) {
      queue.pending.push(events);
      if (!queue.running) queue.running = this.drain(queue);
    }
  }

  /** Resolves once every queued envelope was delivered or given up on. */
  async idle(): Promise<void> {
    while (this.queues.some((queue) => queue.running)) {
      await Promise.all(this.queues.map((queue) => queue.running));
    }
  }

  stats(): { delivered: number; failedAttempts: number } {
    return { delivered: this.delivered, failedAttempts: this.failedAttempts };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    await Promise.allSettled(this.queues.map((queue) => queue.running));
  }

  private async drain(queue: EndpointQueue): Promise<void> {
    try {
      while (!this.closed && queue.pending.length > 0) {
        const events = queue.pending[0]!;
        await this.deliver(queue.endpoint, events);
        queue.pending.shift();
      }
    } finally {
      queue.running = undefined;
    }
  }

  private async deliver(endpoint: NotificationEndpoint, events: DistributionEvent[]): Promise<void> {
    const maxAttempts = this.options.maxAttempts ?? 8;
    let delay = this.options.backoffMs ?? 100;
    const body = JSON.stringify({ events });
    for (let attempt = 1; attempt <= maxAttempts && !this.closed; attempt++) {
      try {
        const response = await fetch(endpoint.url, {
          method: "POST",
          headers: { ...endpoint.headers, "Content-Type": EVENTS_MEDIA_TYPE },
          body,
          redirect: "manual",
          signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.options.timeoutMs ?? 5_000)]),
        });
        await response.arrayBuffer().catch(() => undefined);
        // distribution counts 2xx and 3xx as delivered.
        if (response.status >= 200 && response.status < 400) {
          this.delivered++;
          return;
        }
      } catch {
        // network error or timeout: retried below
      }
      this.failedAttempts++;
      if (attempt < maxAttempts) {
        await sleep(delay, this.abort.signal);
        delay = Math.min(delay * 2, this.options.maxBackoffMs ?? 5_000);
      }
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
