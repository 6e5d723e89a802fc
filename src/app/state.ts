import { environmentOrder, type FerryConfig } from "../core/config/schema.js";
import { formatBranchName } from "../core/pr/branch.js";
import {
  DASHBOARD_TITLE,
  emptyState,
  formatDashboard,
  formatStatusTable,
  parseState,
  type FerryState,
  type StatusInput,
} from "../core/pr/dashboard.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type { IssueInfo, PullRequestInfo } from "./github-port.js";
import { repoFileSource } from "./repo-files.js";

/**
 * Holds and floors live in the hidden block of the pinned "Ferry dashboard" issue: GitHub holds
 * the state, so any replica (or a restarted one) sees the same holds.
 */
export async function loadState(
  deps: AppDeps,
): Promise<{ state: FerryState; issue?: number; dashboard?: IssueInfo }> {
  const issue = await deps.github.findIssue(DASHBOARD_TITLE);
  if (!issue) return { state: emptyState() };
  return { state: parseState(issue.body), issue: issue.number, dashboard: issue };
}

/** What a caller already read from GitHub in this run, so the dashboard does not read it again. */
export interface KnownDashboardInputs {
  /** The dashboard issue as just read (null: just found absent). */
  dashboard?: IssueInfo | null;
  /** Each environment's open Ferry PR as just seen (undefined value: none open). */
  pulls?: Record<string, PullRequestInfo | undefined>;
}

/** Read-modify-write of the state, serialized per repository in this process. */
export async function updateState(
  deps: AppDeps,
  loaded: LoadedConfig,
  change: (state: FerryState) => void,
): Promise<FerryState> {
  return deps.locks.run(`${deps.github.owner}/${deps.github.repo}#state`, async () => {
    const { state, dashboard } = await loadState(deps);
    change(state);
    await writeDashboard(deps, loaded, state, { dashboard: dashboard ?? null });
    return state;
  });
}

/**
 * Upserts the dashboard (table, diagram and state); creates and pins it on first use. Its
 * "Updated" time alone never causes a write: running it twice changes nothing the second time
 * (STYLE.md habit 9), so the periodic scan does not edit the issue every 5 minutes.
 */
export async function writeDashboard(
  deps: AppDeps,
  loaded: LoadedConfig,
  state?: FerryState,
  known: KnownDashboardInputs = {},
): Promise<void> {
  const issue =
    known.dashboard === undefined
      ? await deps.github.findIssue(DASHBOARD_TITLE)
      : (known.dashboard ?? undefined);
  const current = state ?? parseState(issue?.body);
  const status = await collectStatus(deps, loaded, current, known.pulls);
  const body = formatDashboard(status, current, deps.now());
  if (!issue) {
    const number = await deps.github.createIssue({ title: DASHBOARD_TITLE, body });
    await deps.github.pinIssue?.(number).catch(() => undefined);
  } else if (stripTime(issue.body) !== stripTime(body) || issue.state !== "open") {
    await deps.github.updateIssue(issue.number, { body, state: "open" });
  }
}

/** What runs where, open PRs and holds: the `/ferry status` table and the dashboard's input. */
export async function collectStatus(
  deps: AppDeps,
  loaded: LoadedConfig,
  state: FerryState,
  knownPulls: Record<string, PullRequestInfo | undefined> = {},
): Promise<StatusInput> {
  const { config } = loaded;
  const files = repoFileSource(deps.github, loaded.base.treeSha);
  const order = environmentOrder(config);
  const running: StatusInput["running"] = {};
  const pulls: StatusInput["pulls"] = {};
  for (const environment of order) {
    try {
      const images = await deps.currentImages(files, config, environment);
      running[environment] = Object.fromEntries(
        Object.entries(images).map(([name, image]) => [name, { tag: image.tag, digest: image.digest }]),
      );
    } catch (error) {
      deps.log.warn({ environment, error: (error as Error).message }, "status: cannot read environment");
      running[environment] = {};
    }
    const pull =
      environment in knownPulls
        ? knownPulls[environment]
        : await deps.github.findOpenPull(formatBranchName(environment));
    pulls[environment] = pull ? { number: pull.number, title: pull.title } : undefined;
  }
  return {
    environments: order.map((name) => ({
      name,
      ...(config.environments[name]?.from ? { from: config.environments[name].from } : {}),
    })),
    images: Object.keys(config.images),
    running,
    pulls,
    holds: state.holds,
  };
}

export async function statusTable(deps: AppDeps, loaded: LoadedConfig): Promise<string> {
  const { state } = await loadState(deps);
  return formatStatusTable(await collectStatus(deps, loaded, state));
}

export function isHeld(state: FerryState, environment: string): boolean {
  return environment in state.holds;
}

export type { FerryConfig };

function stripTime(body: string): string {
  return body.replace(/_Updated [^_]*\._/, "");
}
