import type { FerryState } from "../core/state/ferry-state.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { writeDashboard, type StateWork } from "./dashboard-issue.js";
import { swapState } from "./state-ref.js";

/**
 * Changes the state on the state ref by compare-and-swap (`swapState`: `change` may run more than
 * once and must only depend on the state it is given), then re-renders the dashboard.
 */
export async function updateState(
  deps: AppDeps<StateWork>,
  loaded: LoadedConfig,
  change: (state: FerryState) => void,
): Promise<FerryState> {
  const { state, dashboard } = await swapState(deps, change);
  await writeDashboard(deps, loaded, state, dashboard === undefined ? {} : { dashboard });
  return state;
}
