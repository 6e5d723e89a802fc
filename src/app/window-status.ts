import { loadConfigAt } from "./generation-source.js";
import { CONFIG_PATH } from "../core/config/load-config.js";
import type { FerryConfig } from "../core/config/schema.js";
import { isUserError } from "../core/errors.js";
import { affectedEnvironments } from "../core/pr/affected-environments.js";
import { parseStateFile, type FerryState } from "../core/state/ferry-state.js";
import { overrideFor } from "../core/state/window-state.js";
import { evaluateWindows, hasWindowRules } from "../core/windows/evaluate-windows.js";
import {
  closedLine,
  formatInstant,
  overrideLine,
  statusDescription,
  WINDOW_STATUS_CONTEXT,
} from "../core/windows/window-text.js";
import type { AppDeps } from "./app-deps.js";
import {
  STATE_FILE,
  STATE_REF,
  type GitHubContents,
  type GitHubStatuses,
  type RepoIdentity,
} from "./github-port.js";
import { windowStatusLock } from "./window-gate.js";

/**
 * The `ferry/window` commit status (docs/config.md "Change windows and freezes"): on every open PR
 * head and merge-queue group commit of a repository whose config has a window or freeze, success
 * when every environment the commit touches is open (or a recorded override lets that very commit
 * through), failure naming the window or freeze and its reason otherwise. A team that makes it a
 * required status blocks a person's merge into a closed environment too.
 */

export type WindowStatusWork = RepoIdentity & GitHubContents & GitHubStatuses;

/** Files of one PR read to tell which environments it touches; past this, it may touch any. */
export const MAX_FILES_READ = 300;

export interface WindowStatus {
  state: "success" | "failure";
  description: string;
}

export function windowedEnvironments(config: FerryConfig): string[] {
  return Object.keys(config.environments).filter((name) => hasWindowRules(config.environments[name]));
}

/** The status of a commit touching `environments`; the state ref is read only when one is closed. */
export async function windowStatusOf(
  deps: AppDeps<GitHubContents>,
  config: FerryConfig,
  environments: readonly string[],
  sha: string,
  known?: FerryState,
): Promise<WindowStatus> {
  const now = deps.now();
  const verdicts = environments
    .filter((name) => hasWindowRules(config.environments[name]))
    .map((name) => ({ name, verdict: evaluateWindows(config.environments[name], now) }));
  if (verdicts.length === 0) return { state: "success", description: "No change window or freeze applies" };
  const closed = verdicts.filter(({ verdict }) => !verdict.open);
  if (closed.length === 0)
    return {
      state: "success",
      description: statusDescription(
        verdicts.map(({ name, verdict }) =>
          verdict.changesAt ? `${name} open until ${formatInstant(verdict.changesAt)}` : `${name} open`,
        ),
      ),
    };
  const state = known ?? parseStateFile(await deps.github.readFile(STATE_REF, STATE_FILE));
  const lines: string[] = [];
  let blocked = false;
  for (const { name, verdict } of closed) {
    const override = overrideFor(state.windows, name, sha);
    if (override) lines.push(overrideLine(name, override));
    else {
      blocked = true;
      lines.unshift(closedLine(name, verdict));
    }
  }
  return { state: blocked ? "failure" : "success", description: statusDescription(lines) };
}

/** Posts the status of one commit (serialized per commit with an override's post). */
async function post(
  deps: AppDeps<WindowStatusWork>,
  config: FerryConfig,
  environments: readonly string[],
  sha: string,
  known?: FerryState,
): Promise<WindowStatus | undefined> {
  const postStatus = deps.github.postStatus;
  if (!postStatus) return undefined;
  return deps.locks.run(windowStatusLock(deps, sha), async () => {
    const status = await windowStatusOf(deps, config, environments, sha, known);
    await postStatus.call(deps.github, sha, { context: WINDOW_STATUS_CONTEXT, ...status });
    return status;
  });
}

/** The config at a commit, or undefined when it has none or it is invalid (the config check says so). */
async function configAt(deps: AppDeps<GitHubContents>, sha: string): Promise<FerryConfig | undefined> {
  let text: string | undefined;
  try {
    text = await deps.github.readFile(sha, CONFIG_PATH);
  } catch (error) {
    if (isUserError(error)) return undefined;
    throw error;
  }
  if (text === undefined) return undefined;
  const loaded = await loadConfigAt(deps, text, sha);
  return loaded.ok ? loaded.config : undefined;
}

/**
 * A PR opened or moved: its head gets `ferry/window` for the environments its files touch (the
 * config of its base; one request), when that config has any window or freeze.
 */
export async function postPullWindowStatus(
  deps: AppDeps<WindowStatusWork>,
  input: { headSha: string; baseSha: string; changedFiles: () => Promise<{ files: string[]; cut: boolean }> },
): Promise<WindowStatus | "skipped"> {
  const config = await configAt(deps, input.baseSha);
  if (!config || windowedEnvironments(config).length === 0) return "skipped";
  const { files, cut } = await input.changedFiles();
  const affected = affectedEnvironments({
    environments: config.environments,
    changedFiles: files,
    listCut: cut,
  });
  return (await post(deps, config, affected, input.headSha)) ?? "skipped";
}

/** A merge-queue group commit: the environments whose files differ from its base (two tree reads). */
export async function postMergeGroupWindowStatus(
  deps: AppDeps<WindowStatusWork>,
  input: { headSha: string; baseSha: string },
): Promise<WindowStatus | "skipped"> {
  const config = await configAt(deps, input.baseSha);
  if (!config || windowedEnvironments(config).length === 0) return "skipped";
  let changed: string[] | undefined;
  try {
    const [base, head] = await Promise.all([
      deps.github.listTree(input.baseSha),
      deps.github.listTree(input.headSha),
    ]);
    const shas = new Map(base.map((entry) => [entry.path, entry.sha]));
    const paths = new Set(head.map((entry) => entry.path));
    changed = [
      ...head.filter((entry) => shas.get(entry.path) !== entry.sha).map((entry) => entry.path),
      ...base.filter((entry) => !paths.has(entry.path)).map((entry) => entry.path),
    ];
  } catch (error) {
    if (!(isUserError(error) && error.code === "tree-too-large")) throw error;
  }
  const affected = affectedEnvironments({
    environments: config.environments,
    changedFiles: changed ?? [],
    listCut: changed === undefined,
  });
  return (await post(deps, config, affected, input.headSha)) ?? "skipped";
}

export { post as postWindowStatus };
