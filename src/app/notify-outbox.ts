import {
  DEFAULT_RETRY_SCHEDULE,
  retryableStatus,
  retryDelay,
  type RetrySchedule,
} from "../core/notify/backoff.js";
import { renderBody } from "../core/notify/bodies.js";
import { deliveryId, eventId, type NotifyEvent } from "../core/notify/notify-event.js";
import { DELIVERY_HEADER, EVENT_HEADER, SIGNATURE_HEADER, signBody } from "../core/notify/signature.js";
import type { NotifyTarget } from "../core/notify/targets.js";
import { mayPassOnRetry } from "../core/errors.js";
import type { AppLogger } from "./app-deps.js";

/**
 * Where notifications wait to be sent (docs/config.md "Notifications"): a bounded queue (past
 * `maxQueued` an event is dropped and counted), a few at a time, each event claimed once across
 * replicas before anything is sent (`claim`, the ledger), then posted to each of its targets with
 * the same delivery id on every attempt, retried with exponential backoff (core/notify/backoff.ts)
 * on the injected clock. Never logs a URL or a key: only target names and delivery ids.
 */

export type PostOutcome =
  | { kind: "answered"; status: number }
  /** The connection failed or timed out: worth another attempt. */
  | { kind: "unreachable"; reason: string }
  /** The address guard refused the host: never retried. */
  | { kind: "refused"; reason: string };

/** The HTTP edge (src/adapters/notify/webhook-sender.ts). */
export interface WebhookPoster {
  post(url: string, body: string, headers: Record<string, string>): Promise<PostOutcome>;
}

export type NotifyOutcome = "sent" | "failed" | "dropped" | "duplicate";

export interface OutboxOptions {
  poster: WebhookPoster;
  log: () => AppLogger;
  /** Milliseconds, the app's clock. */
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  schedule?: RetrySchedule;
  /** Events waiting at most (default 500). */
  maxQueued?: number;
  /** Events sent at once (default 2). */
  concurrency?: number;
  /** Per target and outcome (metrics). */
  observe?: (outcome: NotifyOutcome, target: string) => void;
}

/** One event, to the targets its environment names, with the ledger claim of its repository. */
export interface OutboxItem {
  event: NotifyEvent;
  targets: readonly NotifyTarget[];
  claim: (eventId: string) => Promise<"claimed" | "seen">;
}

/** Event ids this process handled lately: a duplicate from the same replica costs no claim. */
const RECENT = 2000;

export class NotificationOutbox {
  private readonly waiting: OutboxItem[] = [];
  private running = 0;
  private readonly recent = new Set<string>();
  private readonly idlers: (() => void)[] = [];
  private readonly schedule: RetrySchedule;
  private readonly maxQueued: number;
  private readonly concurrency: number;

  constructor(private readonly options: OutboxOptions) {
    this.schedule = options.schedule ?? DEFAULT_RETRY_SCHEDULE;
    this.maxQueued = options.maxQueued ?? 500;
    this.concurrency = options.concurrency ?? 2;
  }

  /** Queues an event; false (and counted as dropped) when the queue is full. */
  enqueue(item: OutboxItem): boolean {
    if (item.targets.length === 0) return true;
    const id = eventId(item.event);
    if (this.recent.has(id)) {
      for (const target of item.targets) this.options.observe?.("duplicate", target.name);
      return true;
    }
    if (this.waiting.length >= this.maxQueued) {
      for (const target of item.targets) this.options.observe?.("dropped", target.name);
      this.options.log().warn({ event: item.event.kind, id }, "notification dropped: the queue is full");
      return false;
    }
    this.remember(id);
    this.waiting.push(item);
    this.pump();
    return true;
  }

  /** Resolves when nothing waits or is being sent. */
  idle(): Promise<void> {
    if (this.running === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idlers.push(resolve));
  }

  private remember(id: string): void {
    this.recent.add(id);
    if (this.recent.size > RECENT) this.recent.delete(this.recent.values().next().value!);
  }

  private pump(): void {
    while (this.running < this.concurrency && this.waiting.length > 0) {
      const item = this.waiting.shift()!;
      this.running++;
      void this.handle(item).finally(() => {
        this.running--;
        this.pump();
        if (this.running === 0 && this.waiting.length === 0) for (const idle of this.idlers.splice(0)) idle();
      });
    }
  }

  private async handle(item: OutboxItem): Promise<void> {
    const claimed = await this.claim(item);
    if (claimed === undefined) return;
    if (claimed === "seen") {
      for (const target of item.targets) this.options.observe?.("duplicate", target.name);
      return;
    }
    await Promise.all(item.targets.map((target) => this.deliver(item.event, target)));
  }

  /**
   * The ledger's claim, tried again on the retry schedule while it fails for a reason that may
   * pass (GitHub's 5xx or rate limit, a contended ledger); undefined when it never succeeded, and
   * then nothing is sent.
   */
  private async claim(item: OutboxItem): Promise<"claimed" | "seen" | undefined> {
    const id = eventId(item.event);
    const log = this.options.log();
    const started = this.options.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return await item.claim(id);
      } catch (error) {
        const reason = (error as Error).message;
        const delay = mayPassOnRetry(error)
          ? retryDelay(this.schedule, attempt, this.options.now() - started)
          : undefined;
        if (delay === undefined) {
          log.warn({ event: item.event.kind, id, attempt, error: reason }, "notification not claimed");
          for (const target of item.targets) this.options.observe?.("failed", target.name);
          return undefined;
        }
        log.info(
          { event: item.event.kind, id, attempt, error: reason, retryInMs: delay },
          "notification claim will be retried",
        );
        await this.options.sleep(delay);
      }
    }
  }

  private async deliver(event: NotifyEvent, target: NotifyTarget): Promise<void> {
    const delivery = deliveryId(event, target.name);
    const body = renderBody(target.kind, event, delivery);
    const headers: Record<string, string> = { [DELIVERY_HEADER]: delivery, [EVENT_HEADER]: event.kind };
    if (target.secret !== undefined) headers[SIGNATURE_HEADER] = signBody(target.secret, body);
    const log = this.options.log();
    const started = this.options.now();
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.options.poster.post(target.url, body, headers);
      const fields = { target: target.name, delivery, event: event.kind, attempt };
      if (outcome.kind === "answered" && outcome.status >= 200 && outcome.status < 300) {
        log.info({ ...fields, status: outcome.status }, "notification sent");
        this.options.observe?.("sent", target.name);
        return;
      }
      const retryable =
        outcome.kind === "unreachable" || (outcome.kind === "answered" && retryableStatus(outcome.status));
      const why = outcome.kind === "answered" ? `HTTP ${outcome.status}` : outcome.reason;
      const delay = retryable ? retryDelay(this.schedule, attempt, this.options.now() - started) : undefined;
      if (delay === undefined) {
        log.warn({ ...fields, reason: why }, "notification failed");
        this.options.observe?.("failed", target.name);
        return;
      }
      log.info({ ...fields, reason: why, retryInMs: delay }, "notification will be retried");
      await this.options.sleep(delay);
    }
  }
}
