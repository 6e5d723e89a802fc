import {
  DASHBOARD_MARKER,
  DASHBOARD_TITLE,
  formatDashboard,
  parseNotices,
  type PolicyNotice,
} from "../core/pr/dashboard.js";
import { formatStateFile, parseStateFile, type FerryState } from "../core/state/ferry-state.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { collectStatus } from "./collect-status.js";
import { errorText } from "./error-text.js";
import type {
  GitHubContents,
  GitHubDeployments,
  GitHubIssues,
  GitHubPulls,
  GitHubStateRef,
  IssueInfo,
  PullRequestInfo,
  RepoIdentity,
} from "./github-port.js";
import { loadState, readStateFile, swapState } from "./state-ref.js";

/**
 * The GitHub roles the dashboard reads and writes: the issue, each environment's PR and latest
 * Deployment status, the files.
 */
export type DashboardWork = GitHubContents & GitHubIssues & GitHubPulls & GitHubDeployments;
/**
 * The GitHub roles a state update calls: the state ref, then the dashboard. Writing the dashboard
 * calls them all too, since it keeps the issue's number in the state ref.
 */
export type StateWork = RepoIdentity & GitHubStateRef & DashboardWork;

/** Dashboard renders of one write at most, when other replicas keep changing the state meanwhile. */
const DASHBOARD_ROUNDS = 3;

/** What a caller already read from GitHub in this run, so the dashboard does not read it again. */
export interface KnownDashboardInputs {
  /** The dashboard issue as just read (null: just found absent; undefined: not read). */
  dashboard?: IssueInfo | null;
  /** Each unit's open Ferry PR as just seen, by branch (undefined value: none open). */
  pulls?: Record<string, PullRequestInfo | undefined>;
  /** The notices of the plans just made (a scan); otherwise the dashboard keeps the ones it shows. */
  notices?: PolicyNotice[];
}

/**
 * Upserts the dashboard (table, diagram and state); creates and pins it on first use. Its
 * "Updated" time alone never causes a write: running it twice changes nothing the second time
 * (docs/architecture.md "Writes are upserts"), so the periodic scan does not edit the issue every 5 minutes. The issue is
 * not compare-and-swap: after writing it, the state is read again and, when another replica
 * changed it meanwhile (and may have written its dashboard before ours), rendered again, so the
 * last dashboard written shows the latest state.
 */
export async function writeDashboard(
  deps: AppDeps<StateWork>,
  loaded: LoadedConfig,
  state?: FerryState,
  known: KnownDashboardInputs = {},
): Promise<void> {
  // One dashboard write at a time per repository in this process; a write that brings no notices
  // of its own keeps the ones this process last wrote, not those of an issue body it read before
  // a scan's write (docs/reliability.md row 78).
  const key = `${deps.github.owner}/${deps.github.repo} dashboard`;
  await deps.locks.run(key, async () => {
    const written = writtenNotices(deps);
    const notices = known.notices ?? written.get(key);
    await writeDashboardNow(deps, loaded, state, notices ? { ...known, notices } : known);
    if (known.notices) remember(written, key, known.notices);
  });
}

/** The notices each repository's dashboard was last written with by this process, per process. */
const noticesWritten = new WeakMap<object, Map<string, PolicyNotice[]>>();
/** Repositories remembered per process at most (the oldest forgotten first). */
const MAX_REMEMBERED = 10_000;

function writtenNotices(deps: AppDeps<StateWork>): Map<string, PolicyNotice[]> {
  let written = noticesWritten.get(deps.locks);
  if (!written) noticesWritten.set(deps.locks, (written = new Map()));
  return written;
}

function remember(written: Map<string, PolicyNotice[]>, key: string, notices: PolicyNotice[]): void {
  written.delete(key);
  if (written.size >= MAX_REMEMBERED) written.delete(written.keys().next().value!);
  written.set(key, notices);
}

async function writeDashboardNow(
  deps: AppDeps<StateWork>,
  loaded: LoadedConfig,
  state: FerryState | undefined,
  known: KnownDashboardInputs,
): Promise<void> {
  let current = state;
  let issue: IssueInfo | undefined;
  if (known.dashboard !== undefined) issue = known.dashboard ?? undefined;
  else {
    current ??= (await loadState(deps)).state;
    issue = await findDashboard(deps, current);
  }
  current ??= (await loadState(deps, { dashboard: issue ?? null })).state;
  const status = await collectStatus(deps, loaded, current, known.pulls);
  const notices = known.notices ?? parseNotices(issue?.body);
  for (let round = 1; ; round++) {
    const body = formatDashboard(
      { ...status, holds: current.holds, notices },
      current,
      deps.now(),
      `${deps.webUrl.replace(/\/+$/, "")}/${deps.github.owner}/${deps.github.repo}/tree/${loaded.base.sha}`,
    );
    if (issue && stripTime(issue.body) === stripTime(body) && issue.state === "open") return;
    if (!issue) {
      const number = await deps.github.createIssue({ title: DASHBOARD_TITLE, body });
      // Issues turned off: no dashboard. The state ref stays the truth and commands are answered
      // where they were given.
      if (number === undefined) {
        deps.log.info({}, "issues are turned off: no dashboard");
        return;
      }
      // Two replicas may both have found none: the oldest open dashboard wins (findIssue prefers
      // it), and a younger duplicate is closed at once rather than kept up to date forever.
      const canonical = await deps.github.findIssue(DASHBOARD_TITLE);
      if (canonical && canonical.number !== number) {
        await deps.github.updateIssue(number, { state: "closed" });
        issue = canonical;
        continue;
      }
      await deps.github.pinIssue?.(number).catch(() => undefined);
      issue = { number, title: DASHBOARD_TITLE, body, state: "open" };
    } else {
      await deps.github.updateIssue(issue.number, { body, state: "open" });
      issue = { ...issue, body, state: "open" };
    }
    if (current.dashboard !== issue.number) {
      await rememberDashboard(deps, issue.number);
      current = { ...current, dashboard: issue.number };
    }
    if (round >= DASHBOARD_ROUNDS) return;
    const latest = await readStateFile(deps.github);
    // No state ref yet: the issue's block is the state itself, just written from what was read.
    if (latest === undefined) return;
    const fresh = parseStateFile(latest);
    if (formatStateFile(fresh) === formatStateFile(current)) return;
    current = fresh;
  }
}

/**
 * The dashboard issue: the one whose number the state ref keeps, once checked to be an open issue
 * Ferry wrote, titled and marked as the dashboard; else the search through every `ferry`-labelled
 * issue (an installation from before the number was kept, or a dashboard closed by hand).
 */
export async function findDashboard(
  deps: AppDeps<GitHubIssues>,
  state: FerryState,
): Promise<IssueInfo | undefined> {
  if (state.dashboard !== undefined && deps.github.getIssue && deps.appLogin !== undefined) {
    const issue = await deps.github.getIssue(state.dashboard);
    if (
      issue?.state === "open" &&
      issue.author === deps.appLogin &&
      issue.title === DASHBOARD_TITLE &&
      issue.body.startsWith(DASHBOARD_MARKER)
    )
      return issue;
  }
  return deps.github.findIssue(DASHBOARD_TITLE);
}

/** Keeps the dashboard's number in the state ref (compare-and-swap, like every state change). */
async function rememberDashboard(
  deps: AppDeps<RepoIdentity & GitHubStateRef & GitHubContents & GitHubIssues>,
  number: number,
): Promise<void> {
  // Only where the number can be read back, and with the state ref in place (before it exists the
  // dashboard's own block is the state).
  if (!deps.github.getIssue || (await deps.github.stateHead()) === undefined) return;
  try {
    await swapState(deps, (state) => {
      state.dashboard = number;
    });
  } catch (error) {
    // A convenience, never worth failing the update for: the search finds the dashboard meanwhile.
    deps.log.warn({ error: errorText(error, deps.secrets) }, "dashboard number not kept in the state ref");
  }
}

/** The notices the last scan left on the dashboard issue (read when the caller has not read it). */
export async function lastNotices(
  deps: AppDeps<GitHubIssues>,
  dashboard?: IssueInfo | null,
): Promise<PolicyNotice[]> {
  const issue = dashboard === undefined ? await deps.github.findIssue(DASHBOARD_TITLE) : dashboard;
  return parseNotices(issue?.body);
}

function stripTime(body: string): string {
  return body.replace(/_Updated [^_]*\._/, "");
}
