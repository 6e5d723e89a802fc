import { shortDigest } from "../image-ref.js";
import { escapeMarkdown, inlineCode } from "./markdown.js";
import { UserError } from "../errors.js";
import { fitBody } from "./github-limits.js";
import { formatPlanBlock, parsePlanBlock, type PlanBlock } from "./plan-block.js";
import { shortSha } from "../commit-sha.js";

/**
 * The PR body: a table of image, from → to, digest, policy and source compare link, a short
 * explanation, and the hidden plan block Ferry parses back. Every user-controlled value is
 * escaped (docs/reliability.md row 14).
 */
export interface BodyRow {
  image: string;
  /** Policy in words, e.g. `semver ^1.0.0` or `promoted from staging`. */
  policy: string;
  /** The source repo (`acme/shop`) and the revisions the compare link spans, when known. */
  source?: { repo: string; from?: string; to?: string };
}

export interface BodyInput {
  plan: PlanBlock;
  rows: Record<string, BodyRow>;
  /** `https://github.com` or the GHE web URL, for compare links. */
  webUrl: string;
  /** One paragraph under the table: why this PR exists (e.g. who asked for a promotion). */
  note?: string;
  /** The issue or PR where the command was given: `#3` makes GitHub link both ways, so no reply is needed. */
  requestedIn?: number;
  /** Where every change can be read when the table is cut to GitHub's body limit (the commit, say). */
  fullTextUrl?: string;
}

const MARKER = "<!-- ferry:pr -->";

export function formatBody(input: BodyInput): string {
  const { plan, rows, webUrl } = input;
  const lines = [
    MARKER,
    `Ferry ${plan.kind === "rollback" ? "rolls back" : "promotes"} these images in **${escapeMarkdown(plan.environment)}**:`,
    "",
    "| Image | From → To | Digest | Policy | Source |",
    "|---|---|---|---|---|",
  ];
  for (const change of plan.changes) {
    const row = rows[change.image];
    lines.push(
      `| ${escapeMarkdown(change.image)} | ${versionCell(change.from)} → ${versionCell(change.to)} | ${inlineCode(shortDigest(change.to.digest))} | ${escapeMarkdown(row?.policy ?? "")} | ${sourceCell(webUrl, row?.source)} |`,
    );
  }
  lines.push("");
  if (input.note) lines.push(escapeMarkdown(input.note), "");
  if (input.requestedIn !== undefined && Number.isSafeInteger(input.requestedIn) && input.requestedIn > 0)
    lines.push(`Requested in #${input.requestedIn}.`, "");
  lines.push(
    "Comment `/promote <env>`, `/rollback <env>`, `/hold <env>`, `/unhold <env>` or `/ferry status`. Ferry keeps this PR up to date; edits to its branch are overwritten.",
  );
  // The plan block is kept whole (it is what Ferry trusts); the table is what gets cut.
  const body = fitBody(
    lines.join("\n"),
    formatPlanBlock(plan),
    input.fullTextUrl ? `Every change: ${input.fullTextUrl}` : "The commit message lists every change.",
  );
  if (body === undefined)
    throw new UserError(
      "body-too-large",
      `the plan for ${plan.environment} (${plan.changes.length} changes) does not fit in a pull request body; split the environment's images`,
    );
  return body;
}

/** The plan a Ferry PR body carries, or undefined for a body Ferry did not write (or that was tampered with). */
export function parseBody(body: string | null | undefined): PlanBlock | undefined {
  if (!body?.includes(MARKER)) return undefined;
  return parsePlanBlock(body);
}

function versionCell(version: { tag?: string; digest?: string }): string {
  if (version.tag !== undefined) return inlineCode(version.tag);
  if (version.digest !== undefined) return inlineCode(shortDigest(version.digest));
  return "(none)";
}

const REPO = /^[A-Za-z0-9-]{1,39}\/[A-Za-z0-9._-]{1,100}$/;
const REVISION = /^[0-9a-f]{7,64}$/;

function sourceCell(webUrl: string, source: BodyRow["source"]): string {
  if (!source || !REPO.test(source.repo)) return "";
  const base = `${webUrl.replace(/\/+$/, "")}/${source.repo}`;
  const from = source.from !== undefined && REVISION.test(source.from) ? source.from : undefined;
  const to = source.to !== undefined && REVISION.test(source.to) ? source.to : undefined;
  if (from && to && from !== to)
    return `[${shortSha(from)}...${shortSha(to)}](${base}/compare/${from}...${to})`;
  if (to) return `[${shortSha(to)}](${base}/commit/${to})`;
  return `[${escapeMarkdown(source.repo)}](${base})`;
}
