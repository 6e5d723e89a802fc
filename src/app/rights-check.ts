import { loadConfigAt } from "./generation-source.js";
import { CONFIG_PATH } from "../core/config/load-config.js";
import type { FerryConfig } from "../core/config/schema.js";
import { isUserError } from "../core/errors.js";
import type { CheckOutput } from "../core/pr/check-run.js";
import { CODEOWNERS_PATHS } from "../core/rights/codeowners.js";
import { rightsChanges, rightsTable, type RightsTable } from "../core/rights/rights-diff.js";
import type { AppDeps } from "./app-deps.js";
import type { GitHubBranches, GitHubContents } from "./github-port.js";
import { ownersByEnvironment } from "./image-owners.js";
import { repoFileSource } from "./repo-files.js";

/**
 * The `ferry/config` check's "who may promote" section (docs/config.md "Who may promote what"):
 * the rights under the default branch's config and CODEOWNERS against those under the PR head's,
 * so that a PR granting a team rights says so where CODEOWNERS on `.github/ferry.yml` makes its
 * owners review it. Commands never read the head: rules change only by a merge.
 */

/** A PR changing one of these may change who may promote. */
export function touchesRights(changedFiles: string[]): boolean {
  return changedFiles.some(
    (file) => file === CONFIG_PATH || (CODEOWNERS_PATHS as readonly string[]).includes(file),
  );
}

/** The check output with the rights section added (unchanged when the base cannot be compared). */
export async function withRightsChanges(
  deps: AppDeps<GitHubContents & GitHubBranches>,
  output: CheckOutput,
  head: { config: FerryConfig; treeSha: string },
): Promise<CheckOutput> {
  const baseTree = (await deps.github.getBranch(await deps.github.defaultBranch()))?.treeSha;
  const base = baseTree === undefined ? undefined : await configAt(deps, baseTree);
  if (base === "invalid" || baseTree === undefined)
    return appended(output, [
      "The default branch's config cannot be read: promote rights were not compared.",
    ]);
  const before = base ? await table(deps, base, baseTree) : {};
  const changes = rightsChanges(before, await table(deps, head.config, head.treeSha));
  if (changes.length === 0) return appended(output, ["Who may promote: no change."]);
  return {
    ...output,
    title: `${output.title}; who may promote changes`,
    summary: [
      output.summary,
      "",
      "**Who may promote** (default branch → this pull request):",
      "",
      ...changes.map((line) => `- ${line}`),
    ].join("\n"),
  };
}

function appended(output: CheckOutput, lines: string[]): CheckOutput {
  return { ...output, summary: [output.summary, "", ...lines].join("\n") };
}

async function configAt(
  deps: AppDeps<GitHubContents>,
  treeSha: string,
): Promise<FerryConfig | "invalid" | undefined> {
  let text: string;
  try {
    text = await repoFileSource(deps.github, treeSha).readFile(CONFIG_PATH);
  } catch (error) {
    if (isUserError(error) && error.code === "file-not-found") return undefined;
    if (isUserError(error)) return "invalid";
    throw error;
  }
  const loaded = await loadConfigAt(deps, text, treeSha);
  return loaded.ok ? loaded.config : "invalid";
}

async function table(
  deps: AppDeps<GitHubContents>,
  config: FerryConfig,
  treeSha: string,
): Promise<RightsTable> {
  const owners = await ownersByEnvironment(
    deps.github,
    treeSha,
    config,
    Object.keys(config.environments),
    Object.keys(config.images),
  );
  return rightsTable(config, owners);
}
