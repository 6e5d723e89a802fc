import { describe, expect, it } from "vitest";
import { appliedCommits, type DeploymentRecords } from "../../../src/core/history/deployments.js";
import { buildHistory, formatHistory } from "../../../src/core/history/history.js";
import type { HistoryCommit } from "../../../src/core/history/history-entry.js";

const commit = (sha: string, date: string, message: string): HistoryCommit => ({
  sha: sha.padEnd(40, "0"),
  date: new Date(date),
  author: "mona",
  message,
});

// Newest first, as GitHub lists commits: 1.7.0 at 09:00, 1.8.0 merged at 12:00.
const history = buildHistory(
  "prod",
  [
    {
      commit: commit("bbbbbbb", "2026-03-10T12:00:00Z", "Promote shop 1.8.0 to prod (#4)"),
      versions: { shop: { tag: "1.8.0" } },
    },
    {
      commit: commit("aaaaaaa", "2026-03-10T09:00:00Z", "Initial config"),
      versions: { shop: { tag: "1.7.0" } },
    },
  ],
  { commits: 100, exhausted: true },
);

function reported(records: DeploymentRecords) {
  const versions: Record<string, { shop: { tag: string } }> = {
    ["aaaaaaa".padEnd(40, "0")]: { shop: { tag: "1.7.0" } },
    ["bbbbbbb".padEnd(40, "0")]: { shop: { tag: "1.8.0" } },
  };
  return { records, applied: appliedCommits(records, (sha) => versions[sha]) };
}

describe("history with the reconciler's Deployment statuses", () => {
  it("answers --at from the merge time, and says so, when no Deployment status reports a commit applied before then", () => {
    const deployments = reported({ environment: "prod", deployments: [], statusesRead: 0, stopped: false });
    const text = formatHistory(
      history,
      { at: new Date("2026-03-10T13:00:00Z") },
      { markdown: false, deployments },
    );
    expect(text).toContain(
      "- shop: 1.8.0 since 2026-03-10T12:00:00.000Z, promotion bbbbbbb #4 by mona; source: the config repo's history (merge time), no Deployment status read reports a commit applied before then",
    );
    expect(text).toContain("No Deployment status reported for prod: the times above are the config repo's.");
  });

  it("gives the health reported at the moment asked, and says when the bound on statuses stopped the reading", () => {
    const deployments = reported({
      environment: "prod",
      deployments: [
        {
          sha: "bbbbbbb".padEnd(40, "0"),
          statuses: [
            { state: "success", description: "Synced and Healthy", at: new Date("2026-03-10T12:05:00Z") },
            {
              state: "in_progress",
              description: "Synced, Degraded: shop 1/3 available",
              at: new Date("2026-03-10T14:00:00Z"),
            },
          ],
        },
      ],
      statusesRead: 2,
      stopped: true,
    });
    const at = (time: string) =>
      formatHistory(history, { at: new Date(time) }, { markdown: false, deployments });
    expect(at("2026-03-10T13:00:00Z")).toContain(
      "- shop: 1.8.0 since 2026-03-10T12:00:00.000Z, promotion bbbbbbb #4 by mona; reported applied by the reconciler at 2026-03-10T12:05:00.000Z (commit bbbbbbb, Healthy); source: Deployment statuses",
    );
    expect(at("2026-03-10T15:00:00Z")).toContain("(commit bbbbbbb, Degraded)");
    expect(at("2026-03-10T15:00:00Z")).toContain(
      "Deployment statuses (2 read; stopped there, older reports were not read).",
    );
    // Before the first report read, the answer falls back to the merge times.
    expect(at("2026-03-10T12:01:00Z")).toContain(
      "- shop: 1.8.0 since 2026-03-10T12:00:00.000Z, promotion bbbbbbb #4 by mona; source: the config repo's history (merge time)",
    );
  });

  it("marks a change that no Deployment status reports applied", () => {
    const deployments = reported({
      environment: "prod",
      deployments: [
        {
          sha: "aaaaaaa".padEnd(40, "0"),
          statuses: [
            { state: "success", description: "Synced and Healthy", at: new Date("2026-03-10T09:01:00Z") },
          ],
        },
      ],
      statusesRead: 1,
      stopped: false,
    });
    const text = formatHistory(history, {}, { markdown: false, deployments });
    expect(text).toContain("1.7.0 → 1.8.0, promotion bbbbbbb #4 by mona; not reported applied");
    expect(text).toContain("shop: 1.7.0, edit aaaaaaa by mona; applied 2026-03-10T09:01:00.000Z (Healthy)");
  });
});
