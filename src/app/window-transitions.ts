import { affectedEnvironments } from "../core/pr/affected-environments.js";
import type { FerryState } from "../core/state/ferry-state.js";
import { evaluateWindows } from "../core/windows/evaluate-windows.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type { GitHubMerges } from "./github-port.js";
import { ferryPull } from "./pull-trust.js";
import type { StateWork } from "./dashboard-issue.js";
import { updateState } from "./update-state.js";
import {
  MAX_FILES_READ,
  postWindowStatus,
  windowedEnvironments,
  type WindowStatusWork,
} from "./window-status.js";

/** Open PRs re-posted at one window change at most (the newest updated first). */
export const MAX_WINDOW_PULLS = 100;

/**
 * At each periodic scan (docs/config.md "Change windows and freezes"): the environments whose
 * window state changed since `ferry/window` last said it (an opening, a closing, another freeze)
 * get it re-posted on every open PR touching them, at most MAX_WINDOW_PULLS; Ferry's own PR into
 * an environment that just closed has native auto-merge turned off, so GitHub cannot merge it
 * either. Then the new states are recorded. No request when nothing changed.
 */
export async function publishWindowTransitions(
  deps: AppDeps<WindowStatusWork & StateWork & GitHubMerges>,
  loaded: LoadedConfig,
  state: FerryState,
): Promise<string[]> {
  const { config } = loaded;
  const now = deps.now();
  const windowed = windowedEnvironments(config);
  const published = state.windows?.published ?? {};
  const keys = Object.fromEntries(
    windowed.map((name) => [name, evaluateWindows(config.environments[name], now).key]),
  );
  const changed = windowed.filter((name) => published[name] !== keys[name]);
  const dropped = Object.keys(published).filter((name) => !windowed.includes(name));
  if (changed.length === 0 && dropped.length === 0) return [];
  if (changed.length > 0 && deps.github.listOpenPulls && deps.github.listPullFiles) {
    const pulls = (await deps.github.listOpenPulls(MAX_WINDOW_PULLS)).filter(
      (pull) => pull.baseRef === loaded.baseBranch,
    );
    for (const pull of pulls) {
      const ferry = ferryPull(deps, pull);
      const affected = ferry
        ? [ferry.environment]
        : await deps.github
            .listPullFiles(pull.number, MAX_FILES_READ)
            .then(({ files, cut }) =>
              affectedEnvironments({ environments: config.environments, changedFiles: files, listCut: cut }),
            );
      if (!affected.some((name) => changed.includes(name))) continue;
      const status = await postWindowStatus(deps, config, affected, pull.headSha, state);
      if (ferry && pull.autoMerge && status?.state === "failure")
        await deps.github.disableAutoMerge(pull).catch(() => undefined);
    }
  }
  await updateState(deps, loaded, (fresh) => {
    const windows = (fresh.windows ??= { overrides: {}, published: {} });
    for (const name of changed) windows.published[name] = keys[name]!;
    for (const name of dropped) delete windows.published[name];
  });
  deps.log.info({ changed, dropped }, "change windows: ferry/window re-posted");
  return changed;
}
