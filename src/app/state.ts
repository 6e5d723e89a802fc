import { environmentOrder, type FerryConfig } from "../core/config/schema.js";
import { readDeploymentStatus, type EnvironmentDeployment } from "../core/deployment-status.js";
import { TransientError } from "../core/errors.js";
import { promotionUnits } from "../core/pr/promotion-unit.js";
import {
  DASHBOARD_MARKER,
  DASHBOARD_TITLE,
  formatDashboard,
  formatDrift,
  formatNoticeLine,
  formatStatusTable,
  parseState,
  parseNotices,
  type PolicyNotice,
  type StatusInput,
  type UnitStatus,
} from "../core/pr/dashboard.js";
import { formatStateFile, parseStateFile, unitHold, type FerryState } from "../core/state/ferry-state.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { errorText } from "./error-text.js";
import { currentImages } from "./plan-environment.js";
import {
  STATE_FILE,
  STATE_REF,
  type GitHubContents,
  type GitHubDeployments,
  type GitHubIssues,
  type GitHubPulls,
  type GitHubStateRef,
  type IssueInfo,
  type PullRequestInfo,
  type RepoIdentity,
} from "./github-port.js";
import { repoFileSource } from "./repo-files.js";
import { environmentHealth } from "./environment-health.js";

/**
 * The GitHub roles the dashboard reads and writes: the issue, each environment's PR and latest
 * Deployment status, the files.
 */
export type DashboardWork = GitHubContents & GitHubIssues & GitHubPulls & GitHubDeployments;
/** The GitHub roles a state update calls: the state ref, then the dashboard. */
export type StateWork = RepoIdentity & GitHubStateRef & DashboardWork;

/** The state file on the state ref, or at one of its commits; undefined before the first write. */
function readStateFile(github: GitHubContents, commit?: string): Promise<string | undefined> {
  return github.readFile(commit ?? STATE_REF, STATE_FILE);
}

/**
 * Compare-and-swap attempts of one state update before giving up. Each lost race is another
 * writer's success: five replicas changing the state at once, plus the one write that records a
 * new dashboard's number, can make the last of them lose five times.
 */
export const STATE_WRITE_ATTEMPTS = 6;
/** Dashboard renders of one write at most, when other replicas keep changing the state meanwhile. */
const DASHBOARD_ROUNDS = 3;

/**
 * Holds and floors live in a JSON file on the state ref (`refs/ferry/state`), read at the commit the ref points at
 * and written by compare-and-swap, so any replica (or a restarted one) sees the same holds and
 * concurrent updates from several replicas never lose one. Before the ref exists (installations
 * from before it), the state is the dashboard issue's hidden block; the first update carries it
 * over. `dashboard` is the issue when this read had to fetch it (null: fetched, absent).
 */
export async function loadState(
  deps: AppDeps<GitHubContents & GitHubIssues>,
  known: { dashboard?: IssueInfo | null } = {},
): Promise<{ state: FerryState; dashboard?: IssueInfo | null }> {
  const text = await readStateFile(deps.github);
  if (text !== undefined) return { state: parseStateFile(text) };
  return migratedState(deps, known);
}

/** Before the state ref exists: the state block of the dashboard issue (installations from before it). */
async function migratedState(
  deps: AppDeps<GitHubIssues>,
  known: { dashboard?: IssueInfo | null } = {},
): Promise<{ state: FerryState; dashboard: IssueInfo | null }> {
  const dashboard =
    known.dashboard === undefined
      ? ((await deps.github.findIssue(DASHBOARD_TITLE)) ?? null)
      : known.dashboard;
  return { state: parseState(dashboard?.body), dashboard };
}

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
 * Read-modify-write of the state by compare-and-swap on the state ref: the new commit's parent is
 * the one read, so a concurrent writer (another replica) makes the ref update fail; then the state
 * is re-read and `change` applied again (it must only depend on the state it is given). The
 * in-process lock only spares this replica needless conflicts. The dashboard is re-rendered after.
 */
export async function updateState(
  deps: AppDeps<StateWork>,
  loaded: LoadedConfig,
  change: (state: FerryState) => void,
): Promise<FerryState> {
  const { state, dashboard } = await deps.locks.run(`${deps.github.owner}/${deps.github.repo}#state`, () =>
    swapState(deps, change),
  );
  await writeDashboard(deps, loaded, state, dashboard === undefined ? {} : { dashboard });
  return state;
}

async function swapState(
  deps: AppDeps<GitHubStateRef & GitHubContents & GitHubIssues>,
  change: (state: FerryState) => void,
): Promise<{ state: FerryState; dashboard?: IssueInfo | null }> {
  for (let attempt = 1; attempt <= STATE_WRITE_ATTEMPTS; attempt++) {
    // The head first, then the file at that very commit: the pair is consistent even if the ref moves.
    const head = await deps.github.stateHead();
    const read =
      head === undefined
        ? await migratedState(deps)
        : { state: parseStateFile(await readStateFile(deps.github, head)) };
    const before = formatStateFile(read.state);
    change(read.state);
    const content = formatStateFile(read.state);
    // Nothing changed (a redelivered /hold): no commit. Without the ref yet, write it: that migrates.
    if (head !== undefined && content === before) return read;
    const outcome = await deps.github.writeStateCommit(head, content, commitMessage(read.state));
    if (outcome === "written") return read;
    deps.log.info({ attempt }, "state ref moved concurrently; re-reading the state");
  }
  throw new TransientError(
    "state-contended",
    `the Ferry state changed under ${STATE_WRITE_ATTEMPTS} attempts in a row; try again`,
  );
}

function commitMessage(state: FerryState): string {
  const held = [
    ...Object.keys(state.holds),
    ...Object.entries(state.unitHolds ?? {}).flatMap(([environment, keys]) =>
      Object.keys(keys).map((key) => `${environment} ${key}`),
    ),
  ].sort();
  return `Ferry state: ${held.length > 0 ? `held ${held.join(", ")}` : "no holds"}\n`;
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
    await deps.locks.run(`${deps.github.owner}/${deps.github.repo}#state`, () =>
      swapState(deps, (state) => {
        state.dashboard = number;
      }),
    );
  } catch (error) {
    // A convenience, never worth failing the update for: the search finds the dashboard meanwhile.
    deps.log.warn({ error: errorText(error, deps.secrets) }, "dashboard number not kept in the state ref");
  }
}

/** What runs where, open PRs and holds: the `/ferry status` table and the dashboard's input. */
export async function collectStatus(
  deps: AppDeps<GitHubContents & GitHubPulls & GitHubDeployments>,
  loaded: LoadedConfig,
  state: FerryState,
  knownPulls: Record<string, PullRequestInfo | undefined> = {},
): Promise<StatusInput> {
  const { config } = loaded;
  const files = repoFileSource(deps.github, loaded.base.treeSha);
  const order = environmentOrder(config);
  const running: StatusInput["running"] = {};
  const pulls: StatusInput["pulls"] = {};
  const deployments: NonNullable<StatusInput["deployments"]> = {};
  const units: NonNullable<StatusInput["units"]> = {};
  for (const environment of order) {
    try {
      const images = await currentImages(files, config, environment);
      running[environment] = Object.fromEntries(
        Object.entries(images).map(([name, image]) => [name, { tag: image.tag, digest: image.digest }]),
      );
    } catch (error) {
      deps.log.warn(
        { environment, error: errorText(error, deps.secrets) },
        "status: cannot read environment",
      );
      running[environment] = {};
    }
    // One PR per unit (docs/config.md "Grouping"): the default unit's in its own column as before.
    for (const unit of promotionUnits(config, environment)) {
      const pull =
        unit.branch in knownPulls ? knownPulls[unit.branch] : await deps.github.findOpenPull(unit.branch);
      const open = pull ? { number: pull.number, title: pull.title } : undefined;
      if (!unit.group) {
        pulls[environment] = open;
        continue;
      }
      const hold = unitHold(state, environment, unit.group);
      const status: UnitStatus = {
        label: `${unit.group.kind} ${unit.group.name}`,
        ...(open ? { pull: open } : {}),
        ...(hold ? { hold } : {}),
      };
      for (const image of unit.images) (units[environment] ??= {})[image] = status;
    }
    if (!(environment in pulls)) pulls[environment] = undefined;
    const deployment = await latestDeployment(deps, config, environment, loaded.baseBranch);
    if (deployment) deployments[environment] = deployment;
  }
  const skipped = files.skipped?.() ?? [];
  return {
    ...(skipped.length > 0 ? { skipped } : {}),
    environments: order.map((name) => ({
      name,
      ...(config.environments[name]?.from ? { from: config.environments[name].from } : {}),
    })),
    images: Object.keys(config.images),
    running,
    pulls,
    holds: state.holds,
    ...(Object.keys(deployments).length > 0 ? { deployments } : {}),
    ...(Object.keys(units).length > 0 ? { units } : {}),
  };
}

/**
 * The environment's latest health from its source (its reconciler's Deployment status, or Argo CD's, Flux's or a named status: sync, health,
 * drift), or undefined when none was reported or it cannot be read (the status still answers).
 */
async function latestDeployment(
  deps: AppDeps<GitHubDeployments>,
  config: FerryConfig,
  environment: string,
  branch: string,
): Promise<EnvironmentDeployment | undefined> {
  try {
    const { health } = await environmentHealth(deps, config, environment, branch);
    if (health === undefined) return undefined;
    return readDeploymentStatus({
      state: health.state,
      description: health.description ?? "",
      sha: health.sha,
      at: health.since.toISOString(),
    });
  } catch (error) {
    deps.log.warn(
      { environment, error: errorText(error, deps.secrets) },
      "status: cannot read the environment's Deployment status",
    );
    return undefined;
  }
}

export async function statusTable(deps: AppDeps<DashboardWork>, loaded: LoadedConfig): Promise<string> {
  const { state, dashboard } = await loadState(deps);
  const status = await collectStatus(deps, loaded, state);
  // Drift the reconcilers reported, as the dashboard shows it.
  const drift = formatDrift(status);
  const table = [formatStatusTable(status), ...(drift.length > 0 ? ["", ...drift] : [])].join("\n").trimEnd();
  // The last scan's notices (an unsigned tag not proposed, a tag outside its policy), as the dashboard shows them.
  const notices = await lastNotices(
    deps,
    dashboard === undefined ? ((await findDashboard(deps, state)) ?? null) : dashboard,
  );
  if (notices.length === 0) return table;
  return [table, "", ...notices.map(formatNoticeLine)].join("\n");
}

/** The notices the last scan left on the dashboard issue (read when the caller has not read it). */
export async function lastNotices(
  deps: AppDeps<GitHubIssues>,
  dashboard?: IssueInfo | null,
): Promise<PolicyNotice[]> {
  const issue = dashboard === undefined ? await deps.github.findIssue(DASHBOARD_TITLE) : dashboard;
  return parseNotices(issue?.body);
}

/** The whole environment is held (a unit's own hold: `unitHold`). */
export function isHeld(state: FerryState, environment: string): boolean {
  return environment in state.holds;
}

export type { FerryConfig };

function stripTime(body: string): string {
  return body.replace(/_Updated [^_]*\._/, "");
}
