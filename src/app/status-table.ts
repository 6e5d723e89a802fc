import { formatDrift, formatNoticeLine, formatStatusTable } from "../core/pr/dashboard.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import { collectStatus } from "./collect-status.js";
import { findDashboard, lastNotices, type DashboardWork } from "./dashboard-issue.js";
import { loadState } from "./state-ref.js";

/** The `/ferry status` reply: what runs where, open PRs and holds, drift and the last scan's notices. */
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
