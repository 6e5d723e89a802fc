import { createHash } from "node:crypto";
import type { NotifyEventKind } from "../config/notify-schema.js";

/**
 * One thing worth telling people outside GitHub (docs/config.md "Notifications"): a release
 * opened, merged, promoted, rolled back, held or blocked, or the reconciler's report that an
 * environment failed to sync or degraded. Built by the app from what Ferry already decided; the
 * bodies (bodies.ts) are rendered from it alone. Pure.
 */

/** One image of the release: what it moves from and to. */
export interface ReleaseChange {
  image: string;
  repository: string;
  from?: string;
  to: string;
  digest?: string;
  /** The source compare (or commit) link, when the image names its source repository. */
  compareUrl?: string;
}

export interface NotifyEvent {
  kind: NotifyEventKind;
  /** `owner/repo` of the config repository. */
  repository: string;
  environment: string;
  /**
   * What tells this occurrence from every other of the same kind (a PR number, a comment id, a
   * Deployment status id, the versions a block is about): the same on every replica and every
   * redelivery of the GitHub event it came from, so that its delivery id is too.
   */
  occurrence: string;
  /** One line, plain text. */
  summary: string;
  changes: ReleaseChange[];
  pull?: { number: number; url: string };
  /** Who asked (`/promote`, `/rollback`, `/hold`). */
  requestedBy?: string;
  /** Who approved the PR (approving reviews), when known. */
  approvedBy?: string[];
  mergedBy?: string;
  /** For `blocked`: gating, soak, window, signature; for the reconciler's reports: sync or health. */
  reason?: string;
  /** Free text from Ferry (the refusal, the reconciler's description), one line. */
  detail?: string;
  /** A link to what the event is about when it is not a PR (a Deployment's log). */
  url?: string;
  /** ISO time Ferry saw it. */
  at: string;
}

/**
 * The event's id: a hash of what it is (never of when it was seen), the same on every replica.
 * The outbox claims it once across replicas before anything is sent.
 */
export function eventId(
  event: Pick<NotifyEvent, "kind" | "repository" | "environment" | "occurrence">,
): string {
  return uuidOf(
    ["ferry-notify-v1", event.repository.toLowerCase(), event.environment, event.kind, event.occurrence].join(
      "\0",
    ),
  );
}

/** The delivery id of an event to one target (`X-Ferry-Delivery`): kept across every retry. */
export function deliveryId(event: NotifyEvent, target: string): string {
  return uuidOf(`${eventId(event)}\0${target}`);
}

/** A UUID-shaped (8-4-4-4-12) hex rendering of a SHA-256, like GitHub's X-GitHub-Delivery. */
function uuidOf(text: string): string {
  const hex = createHash("sha256").update(text).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
