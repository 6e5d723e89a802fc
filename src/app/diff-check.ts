/**
 * The `ferry/diff` check run (docs/diff-check.md): on a pull request (or a merge-queue group
 * commit) that touches an environment's paths or what its kustomizations load, each affected
 * environment is rendered at the base and at the head and the two renders compared
 * (core/diff). `failure` on a danger (prune, renders empty, deletes a Namespace, CRD or PVC,
 * changes an immutable field) or a head that does not render; `neutral` when a limit or a
 * refusal stopped a render, or for a fork; `success` otherwise.
 *
 * Requests: the config blob at the base, one recursive tree per side, the blobs not seen before
 * (the content cache keeps the rest), two for the check run (in progress, then completed).
 * Renders run one at a time per installation and are cached by what was rendered.
 */
import { loadConfigAt } from "./generation-source.js";
import { CONFIG_PATH } from "../core/config/load-config.js";
import {
  code,
  diffConclusion,
  diffEnvironment,
  formatDiffReport,
  type NamedDiff,
} from "../core/diff/index.js";
import { isUserError } from "../core/errors.js";
import { affectedEnvironments } from "../core/pr/affected-environments.js";
import type { AppDeps } from "./app-deps.js";
import { listSnapshot, readSnapshot, type Snapshot } from "./diff-snapshot.js";
import { kustomizationTexts, renderSide, type SideResult } from "./diff-render-side.js";
import { errorText } from "./error-text.js";
import type { CheckRunResult, GitHubChecks, GitHubContents, RepoIdentity } from "./github-port.js";

export const DIFF_CHECK_NAME = "ferry/diff";

/** GitHub's limit on a check run's summary and text (characters). */
const CHECK_CHARS = 65_535;

export type DiffGitHub = RepoIdentity & GitHubContents & GitHubChecks;

export interface DiffCheckInput {
  headSha: string;
  baseSha: string;
  /** The PR's changed files; absent (a merge-queue group): every file whose blob differs. */
  changedFiles?: readonly string[];
  /** GitHub cut the file list (3,000 files). */
  listCut?: boolean;
  /** The head is in another repository: not rendered (docs/diff-check.md "Forks"). */
  fork?: boolean;
}

export interface DiffCheckOutcome {
  conclusion: CheckRunResult["conclusion"];
  /** The short table of the summary (for Ferry's own PR bodies). */
  table: string;
}

type Listing = Awaited<ReturnType<typeof listSnapshot>>;

interface Unrendered {
  environment: string;
  failed: "limit" | "broken";
  reason: string;
}

export async function checkDiff(
  deps: AppDeps<DiffGitHub>,
  input: DiffCheckInput,
): Promise<DiffCheckOutcome | "skipped"> {
  const diff = deps.diff;
  const { startCheckRun, completeCheckRun } = deps.github;
  if (!diff || !startCheckRun || !completeCheckRun) return "skipped";
  const config = await baseConfig(deps, input.baseSha);
  if (!config) return "skipped";
  // A fork's head is never read (docs/diff-check.md "Forks"): its environments are found from the
  // PR's file list and the base's kustomizations.
  const shas = input.fork ? [input.baseSha] : [input.baseSha, input.headSha];
  const lists = await Promise.all(shas.map((sha) => listSnapshot(deps.github, sha)))
    .then((pair) => ({ pair }))
    .catch((error: unknown) => {
      if (isUserError(error) && error.code === "diff-limit") return { limit: errorText(error, deps.secrets) };
      throw error;
    });
  const snapshots = "pair" in lists ? lists.pair.map((list) => lazySnapshot(deps, list)) : [];
  const kustomizations = await Promise.all(snapshots.map(async (read) => kustomizationTexts(await read())));
  const changedFiles =
    input.changedFiles ?? ("pair" in lists ? changedBetween(lists.pair[0]!, lists.pair[1]!) : []);
  const affected = new Set<string>();
  for (const texts of kustomizations.length > 0 ? kustomizations : [new Map<string, string>()])
    for (const name of affectedEnvironments({
      environments: config.environments,
      changedFiles,
      listCut: input.listCut ?? (input.changedFiles === undefined && !("pair" in lists)),
      kustomizations: texts,
    }))
      affected.add(name);
  if (affected.size === 0) return "skipped";
  const id = await startCheckRun.call(deps.github, DIFF_CHECK_NAME, input.headSha);
  try {
    const result: CheckRunResult & { table: string } = input.fork
      ? forkResult()
      : "limit" in lists
        ? limitResult(lists.limit)
        : await deps.locks.run(`diff-render:${deps.github.owner}`, () =>
            renderAll(deps, diff, config.environments, [...affected], lists.pair, snapshots),
          );
    await completeCheckRun.call(deps.github, id, result);
    return { conclusion: result.conclusion, table: result.table };
  } catch (error) {
    // The run never stays in progress: it says what stopped it, then the work is retried.
    await completeCheckRun.call(deps.github, id, {
      conclusion: "neutral",
      title: "The diff could not be computed",
      summary: errorText(error, deps.secrets),
    });
    throw error;
  }
}

async function baseConfig(deps: AppDeps<DiffGitHub>, baseSha: string) {
  let text: string | undefined;
  try {
    text = await deps.github.readFile(baseSha, CONFIG_PATH);
  } catch (error) {
    if (isUserError(error)) return undefined;
    throw error;
  }
  if (text === undefined) return undefined;
  // Generated environments are diffed like written ones: expanded over the base's tree.
  const loaded = await loadConfigAt(deps, text, baseSha);
  return loaded.ok ? loaded.config : undefined;
}

function lazySnapshot(deps: AppDeps<DiffGitHub>, list: Listing): () => Promise<Snapshot> {
  let read: Promise<Snapshot> | undefined;
  return () => (read ??= readSnapshot(deps.github, list));
}

/** Files whose blob differs between the two listings (links count by name). */
function changedBetween(base: Listing, head: Listing): string[] {
  const shas = new Map(base.blobs.map((blob) => [blob.path, blob.sha]));
  const changed = new Set<string>();
  for (const blob of head.blobs) if (shas.get(blob.path) !== blob.sha) changed.add(blob.path);
  const inHead = new Set(head.blobs.map((blob) => blob.path));
  for (const blob of base.blobs) if (!inHead.has(blob.path)) changed.add(blob.path);
  for (const link of [...base.links, ...head.links]) changed.add(link);
  return [...changed];
}

function forkResult(): CheckRunResult & { table: string } {
  const summary =
    "This pull request comes from a fork: Ferry does not render it. Anyone can open one, and each " +
    "render holds the installation's only render slot for up to its time limit, so a fork could " +
    "stall every other PR's check. Push the branch to this repository to get the diff.";
  return { conclusion: "neutral", title: "Not rendered: the head is in a fork", summary, table: "" };
}

function limitResult(reason: string): CheckRunResult & { table: string } {
  return {
    conclusion: "neutral",
    title: `Not rendered: ${reason}`.slice(0, 200),
    summary: reason,
    table: "",
  };
}

async function renderAll(
  deps: AppDeps<DiffGitHub>,
  diff: NonNullable<AppDeps["diff"]>,
  environments: Record<string, { paths: string[] }>,
  affected: string[],
  lists: Listing[],
  snapshots: (() => Promise<Snapshot>)[],
): Promise<CheckRunResult & { table: string }> {
  const sideDeps = { ...diff, secrets: deps.secrets };
  const rendered: NamedDiff[] = [];
  const unrendered: Unrendered[] = [];
  const partial: { environment: string; line: string }[] = [];
  for (const environment of affected) {
    const paths = environments[environment]!.paths;
    const sides: SideResult[] = [];
    for (const side of [0, 1])
      sides.push(await renderSide(sideDeps, snapshots[side]!, lists[side]!.key, paths));
    const [base, head] = sides as [SideResult, SideResult];
    if ("objects" in base && "objects" in head) {
      rendered.push({ environment, diff: diffEnvironment(base.objects, head.objects) });
      // What the head did not render (a path, an Argo CD override), then what only the base did not.
      const baseOnly = base.notRendered.filter((line) => !head.notRendered.includes(line));
      for (const line of [...head.notRendered, ...baseOnly.map((item) => `base: ${item}`)])
        partial.push({ environment, line });
      continue;
    }
    const failedSide = "failed" in head ? head : (base as Extract<SideResult, { failed: string }>);
    const which = "failed" in head ? "head" : "base";
    unrendered.push({
      environment,
      // A base that does not render leaves nothing to compare with: neutral, whatever the reason.
      failed: which === "base" ? "limit" : failedSide.failed,
      reason: `${which}: ${failedSide.reason}`,
    });
  }
  return composeResult(deps, rendered, unrendered, partial);
}

function composeResult(
  deps: AppDeps<DiffGitHub>,
  rendered: NamedDiff[],
  unrendered: Unrendered[],
  partial: { environment: string; line: string }[],
): CheckRunResult & { table: string } {
  const redact = (text: string) => (deps.secrets ? deps.secrets.redact(text) : text);
  const notes = [
    ...unrendered.map(
      (item) =>
        `- **${item.environment}** not rendered (${item.failed === "limit" ? "over a limit or refused" : "does not render"}): ${item.reason.replace(/[\r\n]+/g, " ")}`,
    ),
    ...partial.map(({ environment, line }) => `- **${environment}** not rendered: ${code(line)}`),
  ];
  const prefix = notes.length > 0 ? redact(`${notes.join("\n")}\n\n`) : "";
  const report = formatDiffReport(
    rendered,
    { summaryChars: CHECK_CHARS - prefix.length, textChars: CHECK_CHARS },
    "ferry diff --base <base> --head <head>",
    redact,
  );
  const dangers = rendered.flatMap(({ environment, diff }) =>
    diff.dangers.map((danger) => `${environment}: ${danger.detail}`),
  );
  const broken = unrendered.filter((item) => item.failed === "broken");
  const limited = unrendered.filter((item) => item.failed === "limit");
  const conclusion =
    diffConclusion(rendered) === "failure" || broken.length > 0
      ? "failure"
      : limited.length > 0
        ? "neutral"
        : "success";
  const title =
    dangers.length > 0
      ? `${dangers.length} danger${dangers.length === 1 ? "" : "s"}: ${dangers[0]}`
      : broken.length > 0
        ? `${broken[0]!.environment} does not render: ${broken[0]!.reason}`
        : limited.length > 0
          ? `${limited[0]!.environment} not rendered: ${limited[0]!.reason}`
          : describeChanges(rendered);
  const table = report.summary.split("\n\n")[0] ?? "";
  return {
    conclusion,
    title: redact(title.replace(/[\r\n]+/g, " ")).slice(0, 250),
    summary: prefix + report.summary,
    text: report.text,
    table,
  };
}

function describeChanges(rendered: NamedDiff[]): string {
  const changed = rendered.filter(({ diff }) => diff.changes.length > 0);
  if (changed.length === 0) return "No rendered change";
  return changed
    .map(
      ({ environment, diff }) =>
        `${environment}: ${diff.changes.length} object${diff.changes.length === 1 ? "" : "s"} changed`,
    )
    .join(", ");
}
