import { CONFIG_PATH, loadConfig } from "../core/config/load-config.js";
import { CONFIG_CHECK_NAME, formatConfigCheck } from "../core/pr/check-run.js";
import type { AppDeps } from "./app-deps.js";
import { closeBrokenConfigIssue, loadRepoConfig } from "./load-repo-config.js";

/**
 * PRs touching `.github/ferry.yml` get a `ferry/config` check run with annotations on the
 * offending lines (issue 5 §7). The file at the PR head is only validated, never used.
 */
export async function checkConfigPullRequest(
  deps: AppDeps,
  input: { headSha: string; changedFiles: string[] },
): Promise<"success" | "failure" | "skipped"> {
  if (!input.changedFiles.includes(CONFIG_PATH)) return "skipped";
  const text = await deps.github.readFile(input.headSha, CONFIG_PATH);
  if (text === undefined) return "skipped";
  const loaded = loadConfig(text);
  const output = formatConfigCheck(CONFIG_PATH, loaded.ok ? [] : loaded.problems);
  await deps.github.createCheckRun({ name: CONFIG_CHECK_NAME, headSha: input.headSha, ...output });
  return output.conclusion;
}

/**
 * A push to the default branch that touched the config: a broken config gets its issue upserted
 * (by loadRepoConfig) and the check; a fixed one closes the issue. Returns whether the config is usable.
 */
export async function checkConfigOnDefaultBranch(
  deps: AppDeps,
  input: { branch: string; headSha: string },
): Promise<boolean> {
  const loaded = await loadRepoConfig(deps, input.branch);
  const problems = loaded.ok || loaded.reason === "missing" ? [] : loaded.problems;
  await deps.github.createCheckRun({
    name: CONFIG_CHECK_NAME,
    headSha: input.headSha,
    ...formatConfigCheck(CONFIG_PATH, problems),
  });
  if (loaded.ok) await closeBrokenConfigIssue(deps);
  return loaded.ok;
}
