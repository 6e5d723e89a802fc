/**
 * Webhook deliveries as GitHub makes them: signed with HMAC-SHA256 over the exact body,
 * `X-GitHub-Event` / `X-GitHub-Delivery` / `X-GitHub-Hook-Installation-Target-*` headers, sent
 * asynchronously (never inside the API call that caused them), recorded with the receiver's
 * answer, and redeliverable under the same delivery id.
 */
import { createHmac, randomUUID } from "node:crypto";

export interface Delivery {
  id: string;
  event: string;
  action: string | undefined;
  appId: number;
  url: string;
  payload: Record<string, unknown>;
  /** The receiver's HTTP status; undefined while in flight; 0 when the connection failed. */
  status: number | undefined;
  error?: string;
  redelivery: boolean;
  deliveredAt?: string;
}

export interface DeliveryTarget {
  appId: number;
  url: string;
  secret: string | null;
  /** Installation target (the app id, as GitHub sends in X-GitHub-Hook-Installation-Target-ID). */
  targetId: number;
}

export class WebhookDispatcher {
  private readonly log: Delivery[] = [];
  private readonly targets = new Map<string, DeliveryTarget>();
  private readonly inFlight = new Set<Promise<void>>();
  private chain: Promise<void> = Promise.resolve();

  enqueue(target: DeliveryTarget, event: string, payload: Record<string, unknown>): Delivery {
    const delivery: Delivery = {
      id: randomUUID(),
      event,
      action: typeof payload.action === "string" ? payload.action : undefined,
      appId: target.appId,
      url: target.url,
      payload,
      status: undefined,
      redelivery: false,
    };
    this.log.push(delivery);
    this.targets.set(delivery.id, target);
    this.schedule(delivery, target);
    return delivery;
  }

  /** Sends the same delivery again with the same `X-GitHub-Delivery`, as GitHub's "Redeliver" does. */
  redeliver(deliveryId: string): Delivery {
    const original = this.log.find((d) => d.id === deliveryId);
    const target = this.targets.get(deliveryId);
    if (!original || !target) throw new Error(`no delivery ${deliveryId}`);
    const again: Delivery = { ...original, status: undefined, redelivery: true };
    delete again.error;
    delete again.deliveredAt;
    this.log.push(again);
    this.schedule(again, target);
    return again;
  }

  deliveries(): Delivery[] {
    return [...this.log];
  }

  /** Resolves when every queued delivery has been answered (or failed). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  // Deliveries go out one after another in the order the events happened, as receivers expect.
  private schedule(delivery: Delivery, target: DeliveryTarget): void {
    const run = this.chain.then(() => this.send(delivery, target));
    this.chain = run;
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }

  private async send(delivery: Delivery, target: DeliveryTarget): Promise<void> {
    const body = JSON.stringify(delivery.payload);
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "user-agent": "GitHub-Hookshot/ferry-emulator",
      "x-github-event": delivery.event,
      "x-github-delivery": delivery.id,
      "x-github-hook-id": String(target.appId),
      "x-github-hook-installation-target-id": String(target.targetId),
      "x-github-hook-installation-target-type": "integration",
    };
    if (target.secret) {
      headers["x-hub-signature-256"] =
        `sha256=${createHmac("sha256", target.secret).update(body).digest("hex")}`;
      headers["x-hub-signature"] = `sha1=${createHmac("sha1", target.secret).update(body).digest("hex")}`;
    }
    try {
      const response = await fetch(target.url, {
        method: "POST",
        headers,
        body,
        signal: AbortSignal.timeout(10_000),
      });
      delivery.status = response.status;
      await response.arrayBuffer().catch(() => undefined);
    } catch (error) {
      delivery.status = 0;
      delivery.error = error instanceof Error ? error.message : String(error);
    }
    delivery.deliveredAt = new Date().toISOString();
  }
}
