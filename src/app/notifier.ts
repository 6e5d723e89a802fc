import type { FerryConfig } from "../core/config/schema.js";
import type { NotifyEvent } from "../core/notify/notify-event.js";

/** One repository's way to the notification outbox (AppDeps.notify; docs/config.md "Notifications"). */
export interface Notifier {
  publish(config: FerryConfig, event: NotifyEvent): void;
}
