/**
 * The `ferry/diff` check for one pull request or merge group (diff-check.ts), and on Ferry's own
 * promotion PRs the short summary table in the body too (docs/diff-check.md).
 */
import { withDiffSection } from "../core/pr/diff-section.js";
import type { AppDeps } from "./app-deps.js";
import { checkDiff, type DiffCheckInput, type DiffGitHub } from "./diff-check.js";
import type { GitHubPulls } from "./github-port.js";
import { ferryPull } from "./pull-trust.js";

export async function checkDiffPullRequest(
  deps: AppDeps<DiffGitHub & GitHubPulls>,
  input: DiffCheckInput & { number?: number; ferrys?: boolean },
): Promise<void> {
  const outcome = await checkDiff(deps, input);
  if (outcome === "skipped" || !input.ferrys || input.number === undefined) return;
  const pull = await deps.github.getPull(input.number);
  // Only a PR Ferry opened, still at the head just checked, gets the table in its body.
  if (!pull || pull.state !== "open" || pull.headSha !== input.headSha || !ferryPull(deps, pull)) return;
  const body = withDiffSection(pull.body, outcome.table);
  if (body !== pull.body) await deps.github.updatePull(pull.number, { body });
}
