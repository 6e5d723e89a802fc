import type { NotifyEventKind } from "../config/notify-schema.js";
import type { NotifyEvent, ReleaseChange } from "./notify-event.js";
import type { NotifyKind } from "./targets.js";

/**
 * The bodies a notification is sent as (docs/config.md "Notifications"): Ferry's own JSON for a
 * generic webhook, Slack's incoming-webhook message (`text` as the fallback, Block Kit `blocks`:
 * https://api.slack.com/messaging/webhooks), and the message with an Adaptive Card attachment that
 * a Teams Workflows webhook ("when a Teams webhook request is received") posts to a channel.
 * Every string is cut to the receiver's limits (Slack: header 150, section 3,000 characters).
 * Pure.
 */

/** Images listed in one body; the rest are counted. */
export const MAX_LISTED_CHANGES = 20;
const MAX_TEXT = 300;

export const EVENT_TITLES: Record<NotifyEventKind, string> = {
  opened: "Release PR opened",
  merged: "Release merged",
  promoted: "Promoted",
  "rolled-back": "Rolled back",
  held: "Held",
  blocked: "Promotion blocked",
  "sync-failed": "Sync failed",
  degraded: "Health degraded",
};

export function renderBody(kind: NotifyKind, event: NotifyEvent, delivery: string): string {
  if (kind === "slack") return JSON.stringify(slackBody(event));
  if (kind === "teams") return JSON.stringify(teamsBody(event));
  return JSON.stringify(jsonBody(event, delivery));
}

/** Ferry's own body: every field of the event, versioned. */
export function jsonBody(event: NotifyEvent, delivery: string): Record<string, unknown> {
  const listed = event.changes.slice(0, MAX_LISTED_CHANGES);
  return {
    version: 1,
    delivery,
    event: event.kind,
    title: title(event),
    repository: event.repository,
    environment: event.environment,
    summary: cut(event.summary, MAX_TEXT),
    changes: listed.map((change) => ({ ...change })),
    ...(event.changes.length > listed.length ? { moreChanges: event.changes.length - listed.length } : {}),
    ...(event.pull ? { pull: event.pull } : {}),
    ...(event.requestedBy ? { requestedBy: event.requestedBy } : {}),
    ...(event.approvedBy ? { approvedBy: event.approvedBy } : {}),
    ...(event.mergedBy ? { mergedBy: event.mergedBy } : {}),
    ...(event.reason ? { reason: event.reason } : {}),
    ...(event.detail ? { detail: cut(event.detail, MAX_TEXT) } : {}),
    ...(event.url ? { url: event.url } : {}),
    at: event.at,
  };
}

export function slackBody(event: NotifyEvent): Record<string, unknown> {
  const lines = changeLines(event).map((line) =>
    [
      `• *${slackEscape(line.image)}* ${slackEscape(line.versions)}`,
      line.digest ? ` \`${slackEscape(line.digest)}\`` : "",
      line.compareUrl ? ` <${slackEscape(line.compareUrl)}|compare>` : "",
    ].join(""),
  );
  const section = [slackEscape(cut(event.summary, MAX_TEXT)), ...lines].join("\n");
  const context = whoLines(event).map(slackEscape);
  if (event.pull) context.push(`<${slackEscape(event.pull.url)}|PR #${event.pull.number}>`);
  else if (event.url) context.push(`<${slackEscape(event.url)}|details>`);
  return {
    text: slackEscape(cut(`${title(event)}: ${event.summary}`, MAX_TEXT)),
    blocks: [
      { type: "header", text: { type: "plain_text", text: cut(title(event), 150) } },
      { type: "section", text: { type: "mrkdwn", text: cut(section, 3000) } },
      ...(context.length > 0
        ? [{ type: "context", elements: [{ type: "mrkdwn", text: cut(context.join(" · "), 3000) }] }]
        : []),
    ],
  };
}

export function teamsBody(event: NotifyEvent): Record<string, unknown> {
  const facts = changeLines(event).map((line) => ({
    title: line.image,
    value: [line.versions, line.digest, line.compareUrl ? `[compare](${line.compareUrl})` : undefined]
      .filter(Boolean)
      .join(" · "),
  }));
  const link = event.pull
    ? { title: `PR #${event.pull.number}`, url: event.pull.url }
    : event.url
      ? { title: "Details", url: event.url }
      : undefined;
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          body: [
            { type: "TextBlock", text: title(event), weight: "Bolder", size: "Medium", wrap: true },
            { type: "TextBlock", text: cut(event.summary, MAX_TEXT), wrap: true },
            ...(facts.length > 0 ? [{ type: "FactSet", facts }] : []),
            ...whoLines(event).map((text) => ({ type: "TextBlock", text, isSubtle: true, wrap: true })),
          ],
          ...(link ? { actions: [{ type: "Action.OpenUrl", title: link.title, url: link.url }] } : {}),
        },
      },
    ],
  };
}

function title(event: NotifyEvent): string {
  return `${EVENT_TITLES[event.kind]}: ${event.environment} (${event.repository})`;
}

interface ChangeLine {
  image: string;
  versions: string;
  digest?: string;
  compareUrl?: string;
}

function changeLines(event: NotifyEvent): ChangeLine[] {
  const listed = event.changes.slice(0, MAX_LISTED_CHANGES).map((change: ReleaseChange): ChangeLine => ({
    image: cut(change.image, 100),
    versions: `${cut(change.from ?? "(none)", 80)} → ${cut(change.to, 80)}`,
    ...(change.digest ? { digest: shortDigest(change.digest) } : {}),
    ...(change.compareUrl ? { compareUrl: change.compareUrl } : {}),
  }));
  const more = event.changes.length - listed.length;
  return more > 0 ? [...listed, { image: `and ${more} more`, versions: "" }] : listed;
}

function whoLines(event: NotifyEvent): string[] {
  return [
    event.requestedBy ? `requested by ${event.requestedBy}` : undefined,
    event.approvedBy && event.approvedBy.length > 0
      ? `approved by ${event.approvedBy.join(", ")}`
      : undefined,
    event.mergedBy ? `merged by ${event.mergedBy}` : undefined,
    event.detail ? cut(event.detail, MAX_TEXT) : undefined,
  ].filter((line): line is string => line !== undefined);
}

function shortDigest(digest: string): string {
  const [algorithm, hex] = digest.split(":");
  return hex ? `${algorithm}:${hex.slice(0, 12)}` : digest.slice(0, 19);
}

/** Slack's control characters as its entities (https://api.slack.com/reference/surfaces/formatting). */
function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function cut(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}
