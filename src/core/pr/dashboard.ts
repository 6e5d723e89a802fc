import { fitBody } from "./github-limits.js";
import { NAME_PATTERN } from "../config/names.js";
import type { EnvironmentDeployment } from "../deployment-status.js";
import { shortDigest } from "../image-ref.js";
import { stateFromData, type FerryState, type Hold } from "../state/ferry-state.js";
import { escapeMarkdown, formatHiddenBlock, inlineCode, parseHiddenBlock } from "./markdown.js";

/**
 * The pinned "Ferry dashboard" issue: the environments × images table, a Mermaid diagram of the
 * promotion graph, and a hidden `ferry:state` block mirroring the holds and floors. The state
 * itself is a JSON file on a ref of its own (`core/state/ferry-state.ts`), updated by
 * compare-and-swap; the block is for humans and for migrating installations that predate the ref.
 */
export const DASHBOARD_TITLE = "Ferry dashboard";

const NAME = NAME_PATTERN;

/** Reads the state block of a dashboard body back (the state before the state ref existed). */
export function parseState(body: string | null | undefined): FerryState {
  return stateFromData(parseHiddenBlock("state", body ?? ""));
}

export interface StatusCell {
  tag?: string;
  digest?: string;
}

export interface StatusInput {
  /** Environments in promotion order, with their upstream. */
  environments: { name: string; from?: string }[];
  images: string[];
  /** environment → image → what runs there. */
  running: Record<string, Record<string, StatusCell>>;
  /** environment → open Ferry PR. */
  pulls: Record<string, { number: number; title: string } | undefined>;
  holds: Record<string, Hold>;
  /** Files under an environment's paths that were left out, with the reason (e.g. too large). */
  skipped?: { path: string; reason: string }[];
  /** A running tag outside its policy, from the last scan's plans (see `PolicyNotice`). */
  notices?: PolicyNotice[];
  /** environment → its reconciler's latest Deployment status: sync, health, drift. */
  deployments?: Record<string, EnvironmentDeployment>;
  /**
   * environment → image → its unit, for images outside the environment's default unit
   * (docs/config.md "Grouping"): the unit in words (`group team-a`), its open PR and its hold.
   */
  units?: Record<string, Record<string, UnitStatus>>;
}

export interface UnitStatus {
  label: string;
  pull?: { number: number; title: string };
  hold?: Hold;
}

/** What a plan tells a human about one image of one environment: e.g. running 2.0.0 outside range 1.x. */
export interface PolicyNotice {
  environment: string;
  /** Absent for a notice about the environment as a whole (a ruleset refusing Ferry's branch). */
  image?: string;
  message: string;
}

const MAX_NOTICES = 100;
const MAX_NOTICE_LENGTH = 500;

/**
 * The notices section: a visible list and a hidden `ferry:notices` block, so that a dashboard
 * refresh that planned nothing (a merge, a command) keeps the last scan's notices.
 */
export function formatNotices(notices: PolicyNotice[]): string {
  if (notices.length === 0) return "";
  const lines = ["### Notices", ""];
  for (const notice of notices) lines.push(formatNoticeLine(notice));
  lines.push("", formatHiddenBlock("notices", notices));
  return lines.join("\n");
}

/** One notice as a list item: `- **env** / image: message` (`- **env**: message` for the whole environment). */
export function formatNoticeLine(notice: PolicyNotice): string {
  const image = notice.image !== undefined ? ` / ${escapeMarkdown(notice.image)}` : "";
  return `- **${escapeMarkdown(notice.environment)}**${image}: ${escapeMarkdown(notice.message)}`;
}

/** Reads the notices block of a dashboard body back; anything malformed is dropped (bodies can be edited). */
export function parseNotices(body: string | null | undefined): PolicyNotice[] {
  const data = parseHiddenBlock("notices", body ?? "");
  if (!Array.isArray(data)) return [];
  const notices: PolicyNotice[] = [];
  for (const entry of data.slice(0, MAX_NOTICES)) {
    const { environment, image, message } = (entry ?? {}) as Record<string, unknown>;
    if (typeof environment !== "string" || !NAME.test(environment)) continue;
    if (image !== undefined && (typeof image !== "string" || !NAME.test(image))) continue;
    if (typeof message !== "string" || message.length > MAX_NOTICE_LENGTH) continue;
    notices.push({ environment, ...(image !== undefined ? { image } : {}), message });
  }
  return notices;
}

/** The environments × images table (also the answer to `/ferry status`). */
export function formatStatusTable(input: StatusInput): string {
  const lines = ["| Environment | Image | Version | Digest | Open PR | Hold |", "|---|---|---|---|---|---|"];
  for (const { name } of input.environments) {
    for (const image of input.images) {
      const cell = input.running[name]?.[image];
      const unit = input.units?.[name]?.[image];
      const pull = unit ? unit.pull : input.pulls[name];
      const hold = input.holds[name] ?? unit?.hold;
      lines.push(
        `| ${escapeMarkdown(name)} | ${escapeMarkdown(image)}${unit ? ` (${escapeMarkdown(unit.label)})` : ""} | ${cell?.tag !== undefined ? inlineCode(cell.tag) : cell?.digest ? "" : "(not found)"} | ${inlineCode(shortDigest(cell?.digest))} | ${pull ? `#${pull.number}` : ""} | ${hold ? `on hold (${hold.reason} by @${escapeMarkdown(hold.by)})` : ""} |`,
      );
    }
  }
  return lines.join("\n");
}

/** A Mermaid flowchart: each environment with what runs there, arrows along `from`. */
export function formatMermaid(input: StatusInput): string {
  const id = (name: string): string => `env_${name.replace(/[^a-z0-9_]/g, "_")}`;
  const lines = ["```mermaid", "flowchart LR"];
  for (const { name } of input.environments) {
    const versions = input.images.map((image) => {
      const cell = input.running[name]?.[image];
      return `${image} ${cell?.tag ?? shortDigest(cell?.digest) ?? "?"}`.replace(/["<>`#]/g, "");
    });
    const hold = input.holds[name] ? " (on hold)" : "";
    lines.push(`  ${id(name)}["${name}${hold}<br/>${versions.join("<br/>")}"]`);
  }
  for (const { name, from } of input.environments)
    if (from !== undefined) lines.push(`  ${id(from)} --> ${id(name)}`);
  lines.push("```");
  return lines.join("\n");
}

/** The first line of every dashboard Ferry writes (checked with its author before it is believed). */
export const DASHBOARD_MARKER = "<!-- ferry:dashboard -->";

export function formatDashboard(
  input: StatusInput,
  state: FerryState,
  now: Date,
  /** Where the full picture can be read when the dashboard is cut to GitHub's body limit. */
  fullTextUrl?: string,
): string {
  const visible = [
    DASHBOARD_MARKER,
    "Ferry keeps this issue current: what runs in each environment, open promotion PRs and holds. Keep it open and pinned; holds are stored on the `refs/ferry/state` ref and shown here.",
    "",
    formatStatusTable(input),
    "",
    ...(input.notices !== undefined && input.notices.length > 0 ? [formatNotices(input.notices), ""] : []),
    ...formatDrift(input),
    formatMermaid(input),
    "",
    ...formatSkipped(input.skipped ?? []),
    `_Updated ${now.toISOString()}._`,
  ].join("\n");
  const fullText = fullTextUrl
    ? `Comment \`/ferry status\` or see ${fullTextUrl}.`
    : "Comment `/ferry status` for the rest.";
  // The state block only mirrors the state ref (the truth): when even it does not fit, it is left out.
  return fitBody(visible, formatState(state), fullText) ?? fitBody(visible, "", fullText)!;
}

/**
 * Drift made visible: per environment whose reconciler reported some, `prod: 2 manual changes
 * undone in the last 24 h` (or the drift it left in place with self-heal off), or nothing.
 */
export function formatDrift(input: StatusInput): string[] {
  const lines = input.environments.flatMap(({ name }) => {
    const drift = input.deployments?.[name]?.drift;
    return drift === undefined ? [] : [`- **${escapeMarkdown(name)}**: ${escapeMarkdown(drift)}`];
  });
  return lines.length > 0 ? ["### Drift", "", ...lines, ""] : [];
}

/** The files Ferry left out, one line each, or nothing. */
function formatSkipped(skipped: { path: string; reason: string }[]): string[] {
  if (skipped.length === 0) return [];
  return [
    "Files Ferry did not read:",
    "",
    ...skipped.map((file) => `- ${inlineCode(file.path)}: ${escapeMarkdown(file.reason)}`),
    "",
  ];
}

export function formatState(state: FerryState): string {
  return formatHiddenBlock("state", state);
}
