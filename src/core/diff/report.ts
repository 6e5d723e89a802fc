/**
 * Environment diffs → a check run's Markdown: `summary` (a table per environment, the dangers, the
 * images, the objects) and `text` (each object's unified diff), each within its character limit
 * (GitHub's check-run output takes 65535 of each). What does not fit is counted in one closing line
 * that points at the CLI. Every piece goes through `redact` before it is measured, so the limits
 * hold for what is posted. docs/diff.md "The check run". Pure.
 */
import { describeVersion } from "../image-ref.js";
import { describeKey } from "./dangers.js";
import type { Danger, EnvironmentDiff, ImageChange, ObjectChange } from "./types.js";

export interface DiffReportLimits {
  summaryChars: number;
  textChars: number;
}

/** GitHub's limit on a check run's `output.summary` and `output.text`. */
export const GITHUB_CHECK_LIMITS: DiffReportLimits = { summaryChars: 65_535, textChars: 65_535 };

export interface NamedDiff {
  environment: string;
  diff: EnvironmentDiff;
}

export interface DiffReport {
  summary: string;
  text: string;
  truncated: boolean;
  /** Changed objects whose diff is not in `text`. */
  omittedObjects: number;
}

/** `failure` when any environment has a danger, else `success`. */
export function diffConclusion(envs: readonly { diff: EnvironmentDiff }[]): "success" | "failure" {
  return envs.some(({ diff }) => diff.dangers.length > 0) ? "failure" : "success";
}

/** `text` as inline code, whatever backticks or newlines it holds. */
export function code(text: string): string {
  const flat = text.replace(/[\r\n]+/g, " ");
  let longest = 0;
  for (const run of flat.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  const fence = "`".repeat(longest + 1);
  const pad = flat.startsWith("`") || flat.endsWith("`") ? " " : "";
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** A fenced block that `body` cannot close early. */
export function fenced(body: string, info: string): string {
  let longest = 0;
  for (const run of body.match(/`{3,}/g) ?? []) longest = Math.max(longest, run.length);
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}${info}\n${body}\n${fence}`;
}

const cell = (text: string) => text.replace(/[\r\n]+/g, " ").replace(/\|/g, "\\|");

/** `ghcr.io/acme/shop 1.7.3 → 1.8.0 (sha256:…)` and where. */
export function describeImageChange(image: ImageChange): string {
  const from = describeVersion({
    ...(image.from !== undefined ? { tag: image.from } : {}),
    ...(image.fromDigest !== undefined ? { digest: image.fromDigest } : {}),
  });
  const to = describeVersion({
    ...(image.to !== undefined ? { tag: image.to } : {}),
    ...(image.toDigest !== undefined ? { digest: image.toDigest } : {}),
  });
  const name = image.fromName ? `${image.fromName} → ${image.name}` : image.name;
  const where = image.container
    ? `container ${image.container} of ${describeKey(image.object)}`
    : describeKey(image.object);
  return `${name} ${from} → ${to} (${where})`;
}

/** `keys added: a, b; changed: c` for a Secret, "" otherwise. */
export function describeSecretKeys(change: ObjectChange): string {
  const keys = change.secretKeys;
  if (!keys) return "";
  const parts = (["added", "changed", "removed"] as const)
    .filter((what) => keys[what].length > 0)
    .map((what) => `${what}: ${keys[what].join(", ")}`);
  return parts.length > 0 ? `Secret keys ${parts.join("; ")} (values never shown)` : "";
}

function countOf(diff: EnvironmentDiff, kind: ObjectChange["kind"]) {
  return diff.changes.filter((change) => change.kind === kind).length;
}

/** Appends pieces while they fit in `limit` less `reserve` (room for the closing line). */
class Budget {
  readonly parts: string[] = [];
  private used = 0;
  full = false;
  constructor(
    private readonly limit: number,
    private readonly reserve: number,
    private readonly redact: (text: string) => string,
  ) {}
  add(piece: string): boolean {
    if (this.full) return false;
    const text = this.redact(piece);
    if (this.used + text.length + 1 > this.limit - this.reserve) {
      this.full = true;
      return false;
    }
    this.parts.push(text);
    this.used += text.length + 1;
    return true;
  }
  close(trailer: string): string {
    const body = this.parts.join("\n");
    return trailer ? `${body}\n${this.redact(trailer)}`.slice(0, this.limit) : body.slice(0, this.limit);
  }
}

/** The summary's lines for one environment; the table rows name one object each. */
function summaryPieces({ environment, diff }: NamedDiff): string[] {
  const pieces = [
    `### ${cell(environment)}: ${countOf(diff, "added")} added, ${countOf(diff, "changed")} changed, ${countOf(diff, "removed")} removed, ${diff.unchanged} unchanged`,
  ];
  if (diff.changes.length === 0) pieces.push("No change.");
  const pruned = diff.dangers.filter((danger) => danger.reason === "prune").length;
  if (diff.dangers.length > 0) {
    pieces.push(
      `**Dangers (the check fails):**${pruned > 0 ? ` ${pruned} object${pruned === 1 ? "" : "s"} would be pruned.` : ""}`,
    );
    for (const danger of diff.dangers) pieces.push(`- ${dangerLine(danger)}`);
  }
  if (diff.images.length > 0) {
    pieces.push("**Images:**");
    for (const image of diff.images) pieces.push(`- ${code(describeImageChange(image))}`);
  }
  if (diff.changes.length > 0) {
    pieces.push("", "| Change | Object |", "| --- | --- |");
    for (const change of diff.changes)
      pieces.push(`| ${change.kind} | ${cell(code(describeKey(change.key)))} |`);
  }
  pieces.push("");
  return pieces;
}

function dangerLine(danger: Danger): string {
  return `**${danger.reason}**: ${code(danger.detail)}`;
}

function textPiece(change: ObjectChange): string {
  const lines = [`#### ${change.kind} ${code(describeKey(change.key))}`];
  const keys = describeSecretKeys(change);
  if (keys) lines.push(cell(keys));
  if (change.note) lines.push(`_${cell(change.note).replace(/[_*]/g, "\\$&")}_`);
  if (change.unifiedDiff) lines.push(fenced(change.unifiedDiff, "diff"));
  return lines.join("\n");
}

export function formatDiffReport(
  envs: readonly NamedDiff[],
  limits: DiffReportLimits,
  cliHint: string,
  redact: (text: string) => string = (text) => text,
): DiffReport {
  const totalObjects = envs.reduce((sum, { diff }) => sum + diff.changes.length, 0);
  const trailerOf = (count: number) =>
    `\n_${count} more object${count === 1 ? "" : "s"} not shown — run ${code(cliHint)} for the whole diff._`;
  const reserve = trailerOf(totalObjects).length + 16;
  const summary = new Budget(limits.summaryChars, reserve, redact);
  const table = [
    "| Environment | Added | Changed | Removed | Unchanged | Dangers |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const { environment, diff } of envs)
    table.push(
      `| ${cell(environment)} | ${countOf(diff, "added")} | ${countOf(diff, "changed")} | ${countOf(diff, "removed")} | ${diff.unchanged} | ${diff.dangers.length} |`,
    );
  summary.add([...table, ""].join("\n"));
  let summaryOmitted = 0;
  for (const env of envs) {
    const pieces = summaryPieces(env);
    const rows = env.diff.changes.length;
    // The object rows come last but one (the closing blank line): count the ones left out.
    pieces.forEach((piece, index) => {
      if (!summary.add(piece) && index >= pieces.length - 1 - rows && index < pieces.length - 1)
        summaryOmitted += 1;
    });
  }
  const text = new Budget(limits.textChars, reserve, redact);
  let textOmitted = 0;
  for (const { environment, diff } of envs) {
    if (diff.changes.length === 0) continue;
    if (!text.add(`### ${cell(environment)}`)) {
      textOmitted += diff.changes.length;
      continue;
    }
    for (const change of diff.changes) if (!text.add(textPiece(change))) textOmitted += 1;
  }
  const omittedObjects = Math.max(textOmitted, summaryOmitted);
  return {
    summary: summary.close(summary.full ? trailerOf(Math.max(summaryOmitted, 1)) : ""),
    text: text.close(text.full ? trailerOf(textOmitted) : ""),
    truncated: summary.full || text.full,
    omittedObjects,
  };
}
