import { describeVersion } from "../image-ref.js";
import {
  appliedAt,
  entryApplied,
  healthAt,
  type AppliedCommit,
  type DeploymentRecords,
} from "./deployments.js";
import { shortSha } from "../commit-sha.js";
import type {
  ChangeKind,
  EnvironmentHistory,
  HistoryCommit,
  HistoryEntry,
  ImageVersion,
} from "./history-entry.js";

/**
 * What ran in an environment over time, from the config repository's own history: each commit
 * that touched the environment's files (a merged promotion, a revert, a hand edit) and what its
 * files said each image runs. Git is the record (https://opengitops.dev/ "Versioned and
 * Immutable"). Pure: commits and their versions in, entries and text out.
 */

/** Default and upper bound of commits read for one answer. */
export const DEFAULT_HISTORY_COMMITS = 100;
export const MAX_HISTORY_COMMITS = 1000;

/** What a commit is, from its message: Ferry's promotion PRs, `git revert`/GitHub's revert PRs, anything else. */
export function classifyCommit(message: string): ChangeKind {
  const subject = message.split("\n", 1)[0]!;
  if (/^Revert "/.test(subject) || /^Merge pull request #\d+ from \S+\/revert-/.test(subject))
    return "revert";
  if (/^Promote .+ to \S+/.test(subject) || /\bfrom \S+\/ferry\/\S+/.test(subject)) return "promotion";
  if (/^Roll back .+ to \S+/i.test(subject) || /^Rollback\b/i.test(subject)) return "revert";
  return "edit";
}

/** The PR number a merge or squash commit names, from its subject. */
export function pullOf(message: string): number | undefined {
  const subject = message.split("\n", 1)[0]!;
  const match = /^Merge pull request #(\d+)/.exec(subject) ?? /\(#(\d+)\)$/.exec(subject);
  return match ? Number(match[1]) : undefined;
}

function sameVersion(a: ImageVersion | undefined, b: ImageVersion | undefined): boolean {
  return a?.tag === b?.tag && a?.digest === b?.digest;
}

/**
 * The changes, oldest first: for each commit (newest first, with what each image ran after it),
 * the images whose version differs from the commit before it. The oldest commit read starts the
 * history (what ran then), unless the history was cut short, when it is still where it starts.
 */
export function buildHistory(
  environment: string,
  snapshots: { commit: HistoryCommit; versions: Record<string, ImageVersion> }[],
  limit: { commits: number; exhausted: boolean },
): EnvironmentHistory {
  const oldestFirst = [...snapshots].reverse();
  const entries: HistoryEntry[] = [];
  let previous: Record<string, ImageVersion> = {};
  for (const [index, { commit, versions }] of oldestFirst.entries()) {
    for (const [image, version] of Object.entries(versions)) {
      const before = index === 0 ? undefined : previous[image];
      if (index > 0 && sameVersion(before, version)) continue;
      const entry: HistoryEntry = {
        image,
        sha: commit.sha,
        date: commit.date,
        kind: classifyCommit(commit.message),
        to: version,
        subject: commit.message.split("\n", 1)[0]!,
      };
      if (before !== undefined) entry.from = before;
      if (commit.author !== undefined) entry.by = commit.author;
      const pull = pullOf(commit.message);
      if (pull !== undefined) entry.pull = pull;
      entries.push(entry);
    }
    previous = versions;
  }
  const history: EnvironmentHistory = { environment, entries };
  const oldest = oldestFirst[0];
  if (!limit.exhausted && oldest !== undefined)
    history.stoppedAt = { commits: limit.commits, sha: oldest.commit.sha, date: oldest.commit.date };
  return history;
}

/** The entry in force for `image` at `at`: the last change at or before it. */
export function versionAt(history: EnvironmentHistory, image: string, at: Date): HistoryEntry | undefined {
  let found: HistoryEntry | undefined;
  for (const entry of history.entries)
    if (entry.image === image && entry.date.getTime() <= at.getTime()) found = entry;
  return found;
}

/** `2026-03-10`, `2026-03-10T14:00`, `2026-03-10T14:00:00Z`: an ISO 8601 date or time (UTC unless an offset is given). */
export function parseHistoryDate(text: string): Date | undefined {
  const match =
    /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?)(Z|[+-]\d{2}:\d{2})?)?$/.exec(text);
  if (!match) return undefined;
  const [, day, time, zone] = match;
  const date = new Date(
    `${day}T${time ?? "00:00"}${time !== undefined && time.length === 5 ? ":00" : ""}${zone ?? "Z"}`,
  );
  return Number.isNaN(date.getTime()) ? undefined : date;
}

export interface HistoryQuery {
  image?: string;
  since?: Date;
  at?: Date;
}

export interface HistoryLinks {
  commit(sha: string): string;
  pull(number: number): string;
}

/** What the environment's reconciler reported (the comment command reads it; the CLI has no GitHub access). */
export interface ReportedDeployments {
  records: DeploymentRecords;
  applied: AppliedCommit[];
}

/**
 * Markdown (comment) or plain text (CLI) answer; links only in markdown. With `deployments`, each
 * change says when the reconciler reported it applied and its health, and `--at` answers from the
 * last commit reported applied before that moment rather than from the merge time.
 */
export function formatHistory(
  history: EnvironmentHistory,
  query: HistoryQuery,
  options: { markdown: boolean; links?: HistoryLinks; deployments?: ReportedDeployments },
): string {
  const { markdown, links, deployments } = options;
  const code = (text: string) => (markdown ? `\`${text.replace(/`/g, "")}\`` : text);
  const commitText = (entry: HistoryEntry) => {
    const short = shortSha(entry.sha);
    const commit = markdown && links ? `[${short}](${links.commit(entry.sha)})` : short;
    const pull =
      entry.pull !== undefined
        ? markdown && links
          ? ` [#${entry.pull}](${links.pull(entry.pull)})`
          : ` #${entry.pull}`
        : "";
    return `${commit}${pull}`;
  };
  const by = (entry: HistoryEntry) =>
    entry.by !== undefined ? ` by ${markdown ? `@${entry.by}` : entry.by}` : "";
  const lines: string[] = [];
  const images =
    query.image !== undefined ? [query.image] : [...new Set(history.entries.map((entry) => entry.image))];
  if (query.at !== undefined) {
    lines.push(`What ran in ${history.environment} at ${query.at.toISOString()}:`, "");
    const reported = deployments === undefined ? undefined : appliedAt(deployments.applied, query.at);
    for (const image of images) {
      const entry = versionAt(history, image, query.at);
      const gitText =
        entry === undefined
          ? undefined
          : `${code(describeVersion(entry.to))} since ${entry.date.toISOString()}, ${entry.kind} ${commitText(entry)}${by(entry)}`;
      const ran = reported?.versions[image];
      if (reported !== undefined && ran !== undefined) {
        const short = shortSha(reported.sha);
        const commit = markdown && links ? `[${short}](${links.commit(reported.sha)})` : short;
        const applied = `reported applied by the reconciler at ${reported.appliedAt.toISOString()} (commit ${commit}, ${healthAt(reported, query.at)}); source: Deployment statuses`;
        // The change that set what ran: the last one to that version before it was applied.
        const change = versionAt(history, image, reported.appliedAt);
        if (entry !== undefined && !sameVersion(entry.to, ran))
          lines.push(
            `- ${image}: ${code(describeVersion(ran))}, ${applied}. The config repo already said ${gitText}, but the reconciler had not reported it applied by then.`,
          );
        else if (change !== undefined && sameVersion(change.to, ran))
          lines.push(
            `- ${image}: ${code(describeVersion(ran))} since ${change.date.toISOString()}, ${change.kind} ${commitText(change)}${by(change)}; ${applied}`,
          );
        else lines.push(`- ${image}: ${code(describeVersion(ran))}, ${applied}`);
      } else if (gitText === undefined) {
        lines.push(`- ${image}: not known (the history read does not reach back that far)`);
      } else {
        lines.push(
          `- ${image}: ${gitText}${deployments !== undefined ? "; source: the config repo's history (merge time), no Deployment status read reports a commit applied before then" : ""}`,
        );
      }
    }
  } else {
    lines.push(
      `History of ${history.environment}${query.image ? ` (${query.image})` : ""}${query.since ? ` since ${query.since.toISOString()}` : ""}, newest first:`,
      "",
    );
    const shown = history.entries
      .filter((entry) => images.includes(entry.image))
      .filter((entry) => query.since === undefined || entry.date.getTime() >= query.since.getTime())
      .reverse();
    if (shown.length === 0) lines.push("- no change in that period");
    const applied = (entry: HistoryEntry): string => {
      if (deployments === undefined) return "";
      const commit = entryApplied(entry, deployments.applied);
      return commit === undefined
        ? "; not reported applied"
        : `; applied ${commit.appliedAt.toISOString()} (${commit.health})`;
    };
    for (const entry of shown)
      lines.push(
        `- ${entry.date.toISOString()} ${entry.image}: ${entry.from ? `${code(describeVersion(entry.from))} → ` : ""}${code(describeVersion(entry.to))}, ${entry.kind} ${commitText(entry)}${by(entry)}${applied(entry)}`,
      );
  }
  if (deployments !== undefined) {
    const { records } = deployments;
    lines.push(
      "",
      records.deployments.length === 0
        ? `No Deployment status reported for ${history.environment}: the times above are the config repo's.`
        : `Applied times and health: the ${history.environment} reconciler's Deployment statuses (${records.statusesRead} read${records.stopped ? "; stopped there, older reports were not read" : ""}).`,
    );
  }
  if (history.stoppedAt !== undefined)
    lines.push(
      "",
      `Stopped after ${history.stoppedAt.commits} commits, at ${shortSha(history.stoppedAt.sha)} (${history.stoppedAt.date.toISOString()}); earlier history was not read.`,
    );
  return lines.join("\n");
}
