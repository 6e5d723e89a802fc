import { loadConfigAt } from "./generation-source.js";
import { CONFIG_PATH, type ConfigProblem } from "../core/config/load-config.js";
import { isUserError, UserError } from "../core/errors.js";
import { BROKEN_CONFIG_TITLE, formatBrokenConfigIssue } from "../core/pr/check-run.js";
import type { GeneratedEntry } from "../core/generate/expand-config.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type { GitHubBranches, GitHubComments, GitHubContents, GitHubIssues } from "./github-port.js";

/** The GitHub roles that reading the config (and upserting its broken-config issue) calls. */
export type ConfigReading = GitHubBranches & GitHubContents & GitHubIssues;

export type RepoConfigResult =
  | ({
      ok: true;
      warnings: ConfigProblem[];
      generated: GeneratedEntry[];
      shadowed: GeneratedEntry[];
    } & LoadedConfig)
  | { ok: false; reason: "missing" }
  | { ok: false; reason: "invalid"; problems: ConfigProblem[]; sha: string };

/**
 * Reads `.github/ferry.yml` from the default branch only, never from a PR head
 * (docs/config.md). A broken config gets one upserted issue, and the caller makes no changes.
 */
export async function loadRepoConfig(
  deps: AppDeps<ConfigReading>,
  baseBranch?: string,
  /** `readOnly`: report a broken config without upserting its issue (e.g. for `GET /status`). */
  options: { readOnly?: boolean } = {},
): Promise<RepoConfigResult> {
  const branch = baseBranch ?? (await deps.github.defaultBranch());
  const base = await deps.github.getBranch(branch);
  if (!base) return { ok: false, reason: "missing" };
  const text = await readConfigText(deps, base);
  if (text === undefined) return { ok: false, reason: "missing" };
  // Generated entries are expanded before anything reads the config (docs/config.md "Generated images and environments").
  const loaded = await loadConfigAt(deps, text, base.treeSha);
  if (!loaded.ok) {
    if (!options.readOnly) await upsertBrokenConfigIssue(deps, loaded.problems, base.sha);
    return { ok: false, reason: "invalid", problems: loaded.problems, sha: base.sha };
  }
  const { config, warnings, generated, shadowed } = loaded;
  return { ok: true, config, warnings, generated, shadowed, baseBranch: branch, base };
}

/**
 * The config as a blob of the base's recursive tree: the same listing the planner reads files from
 * next, and both are cached by SHA, so an unchanged base costs no request beyond the branch itself
 * (docs/architecture.md "Request budget"). A tree too large to list in one request falls back to the
 * contents API.
 */
async function readConfigText(
  deps: AppDeps<GitHubContents>,
  base: { sha: string; treeSha: string },
): Promise<string | undefined> {
  let entries;
  try {
    entries = await deps.github.listTree(base.treeSha);
  } catch (error) {
    if (isUserError(error) && error.code === "tree-too-large")
      return deps.github.readFile(base.sha, CONFIG_PATH);
    throw error;
  }
  const entry = entries.find((candidate) => candidate.path === CONFIG_PATH);
  if (!entry) return undefined;
  // A link could point outside the repository or at another file: never followed (docs/reliability.md row 15).
  if (entry.type !== "blob")
    throw new UserError("unsafe-path", `${CONFIG_PATH} is a ${entry.type}; Ferry never follows links`);
  return deps.github.readBlob(entry.sha);
}

async function upsertBrokenConfigIssue(
  deps: AppDeps<GitHubIssues>,
  problems: ConfigProblem[],
  sha: string,
): Promise<void> {
  const body = formatBrokenConfigIssue(CONFIG_PATH, problems, sha);
  const issue = await deps.github.findIssue(BROKEN_CONFIG_TITLE);
  if (!issue) {
    const opened = await deps.github.createIssue({ title: BROKEN_CONFIG_TITLE, body });
    // With issues turned off the `ferry/config` check run on the PR is where the problems show.
    deps.log.warn(
      { sha, problems: problems.length },
      opened === undefined ? "config invalid: issues are turned off" : "config invalid: issue opened",
    );
  } else if (issue.body !== body || issue.state !== "open") {
    await deps.github.updateIssue(issue.number, { body, state: "open" });
  }
}

/** Called when a push fixed the config: closes the broken-config issue, if any. */
export async function closeBrokenConfigIssue(deps: AppDeps<GitHubIssues & GitHubComments>): Promise<void> {
  const issue = await deps.github.findIssue(BROKEN_CONFIG_TITLE);
  if (issue && issue.state === "open") {
    await deps.github.comment(issue.number, "The config is valid again; Ferry resumes.");
    await deps.github.updateIssue(issue.number, { state: "closed" });
  }
}
