import { CONFIG_PATH, loadConfig, type ConfigProblem } from "../core/config/load-config.js";
import { BROKEN_CONFIG_TITLE, formatBrokenConfigIssue } from "../core/pr/check-run.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";

export type RepoConfigResult =
  | ({ ok: true } & LoadedConfig)
  | { ok: false; reason: "missing" }
  | { ok: false; reason: "invalid"; problems: ConfigProblem[]; sha: string };

/**
 * Reads `.github/ferry.yml` from the default branch only, never from a PR head (DESIGN.md
 * "Configuration"). A broken config gets one upserted issue, and the caller makes no changes.
 */
export async function loadRepoConfig(deps: AppDeps, baseBranch?: string): Promise<RepoConfigResult> {
  const branch = baseBranch ?? (await deps.github.defaultBranch());
  const base = await deps.github.getBranch(branch);
  if (!base) return { ok: false, reason: "missing" };
  const text = await deps.github.readFile(base.sha, CONFIG_PATH);
  if (text === undefined) return { ok: false, reason: "missing" };
  const loaded = loadConfig(text);
  if (!loaded.ok) {
    await upsertBrokenConfigIssue(deps, loaded.problems, base.sha);
    return { ok: false, reason: "invalid", problems: loaded.problems, sha: base.sha };
  }
  return { ok: true, config: loaded.config, baseBranch: branch, base };
}

async function upsertBrokenConfigIssue(deps: AppDeps, problems: ConfigProblem[], sha: string): Promise<void> {
  const body = formatBrokenConfigIssue(CONFIG_PATH, problems, sha);
  const issue = await deps.github.findIssue(BROKEN_CONFIG_TITLE);
  if (!issue) {
    await deps.github.createIssue({ title: BROKEN_CONFIG_TITLE, body });
    deps.log.warn({ sha, problems: problems.length }, "config invalid: issue opened");
  } else if (issue.body !== body || issue.state !== "open") {
    await deps.github.updateIssue(issue.number, { body, state: "open" });
  }
}

/** Called when a push fixed the config: closes the broken-config issue, if any. */
export async function closeBrokenConfigIssue(deps: AppDeps): Promise<void> {
  const issue = await deps.github.findIssue(BROKEN_CONFIG_TITLE);
  if (issue && issue.state === "open") {
    await deps.github.comment(issue.number, "The config is valid again; Ferry resumes.");
    await deps.github.updateIssue(issue.number, { state: "closed" });
  }
}
