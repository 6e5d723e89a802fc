import { TransientError } from "../core/errors.js";
import { DASHBOARD_TITLE, parseState } from "../core/pr/dashboard.js";
import { formatStateFile, parseStateFile, type FerryState } from "../core/state/ferry-state.js";
import type { AppDeps } from "./app-deps.js";
import {
  STATE_FILE,
  STATE_REF,
  type GitHubContents,
  type GitHubIssues,
  type GitHubStateRef,
  type IssueInfo,
  type RepoIdentity,
} from "./github-port.js";

/** The state file on the state ref, or at one of its commits; undefined before the first write. */
export function readStateFile(github: GitHubContents, commit?: string): Promise<string | undefined> {
  return github.readFile(commit ?? STATE_REF, STATE_FILE);
}

/**
 * Compare-and-swap attempts of one state update before giving up. Each lost race is another
 * writer's success: five replicas changing the state at once, plus the one write that records a
 * new dashboard's number, can make the last of them lose five times.
 */
export const STATE_WRITE_ATTEMPTS = 6;

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

/**
 * Read-modify-write of the state by compare-and-swap on the state ref: the new commit's parent is
 * the one read, so a concurrent writer (another replica) makes the ref update fail; then the state
 * is re-read and `change` applied again (it must only depend on the state it is given). The
 * in-process lock (one per repository) only spares this replica needless conflicts.
 */
export function swapState(
  deps: AppDeps<RepoIdentity & GitHubStateRef & GitHubContents & GitHubIssues>,
  change: (state: FerryState) => void,
): Promise<{ state: FerryState; dashboard?: IssueInfo | null }> {
  return deps.locks.run(`${deps.github.owner}/${deps.github.repo}#state`, () => compareAndSwap(deps, change));
}

async function compareAndSwap(
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

/** The whole environment is held (a unit's own hold: `unitHold`). */
export function isHeld(state: FerryState, environment: string): boolean {
  return environment in state.holds;
}
