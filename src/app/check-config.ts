import { loadConfigAt } from "./generation-source.js";
import {
  byPosition,
  checkReferences,
  environmentPathsPosition,
  type ReferenceProblem,
} from "../core/check/check-references.js";
import { checkRemoteBases } from "../core/check/remote-bases.js";
import {
  MAX_GENERATOR_SOURCES,
  plaintextSecretProblems,
  secretGeneratorSources,
} from "../core/check/plaintext-secrets.js";
import { CONFIG_PATH, MAX_CONFIG_BYTES, type ConfigProblem } from "../core/config/load-config.js";
import type { FerryConfig } from "../core/config/schema.js";
import { isUserError } from "../core/errors.js";
import type { GeneratedEntry } from "../core/generate/expand-config.js";
import { formatGenerated } from "../core/generate/format-generated.js";
import { CONFIG_CHECK_NAME, formatConfigCheck } from "../core/pr/check-run.js";
import type { AppDeps } from "./app-deps.js";
import { errorText } from "./error-text.js";
import type {
  GitHubBranches,
  GitHubChecks,
  GitHubComments,
  GitHubContents,
  GitHubDeployments,
} from "./github-port.js";
import { soakHealthWarnings } from "./soak-health-warnings.js";
import { closeBrokenConfigIssue, loadRepoConfig, type ConfigReading } from "./load-repo-config.js";
import type { FileSource } from "./plan-inputs.js";
import { repoFileSource } from "./repo-files.js";
import { touchesRights, withRightsChanges } from "./rights-check.js";
import { needsCodeowners } from "../core/rights/image-rights.js";

/**
 * PRs touching `.github/ferry.yml` get a `ferry/config` check run with annotations on the
 * offending lines (docs/architecture.md "GitHub conventions"). The file at the PR head is only validated, never used. Checked as
 * `ferry check` does: the schema (failure), then every image against each environment's files
 * at the PR head (warnings, see formatConfigCheck).
 *
 * Requests: one recursive tree of the head commit, one blob for the config and one per distinct
 * environment file (blobs unchanged since the base come from the content cache), one check run.
 */
export async function checkConfigPullRequest(
  deps: AppDeps<GitHubContents & GitHubChecks & GitHubDeployments & GitHubBranches>,
  input: { headSha: string; changedFiles: string[]; listCut?: boolean },
): Promise<"success" | "failure" | "skipped"> {
  // The config, or an environment's files (a plaintext Secret there fails the check). A list that
  // GitHub cut (3,000 files) may leave them out: checked then too.
  if (
    !input.listCut &&
    !input.changedFiles.some((file) => file === CONFIG_PATH || ENVIRONMENT_FILE.test(file)) &&
    !touchesRights(input.changedFiles)
  )
    return "skipped";
  // The Git Data API resolves a commit SHA to its tree, so the head needs no commit lookup.
  const files = repoFileSource(deps.github, input.headSha);
  const head = await readHeadConfig(deps, files, input.headSha);
  if (head === undefined) return "skipped";
  const loaded =
    "problem" in head
      ? { ok: false as const, problems: [head.problem] }
      : await loadConfigAt(deps, head.text, input.headSha, files);
  const problems: ConfigProblem[] = loaded.ok ? [] : loaded.problems;
  const warnings: ReferenceProblem[] = [];
  if (loaded.ok) warnings.push(...configWarnings(loaded.warnings));
  if (loaded.ok && "text" in head) {
    warnings.push(
      ...(head.treeListed
        ? await referenceProblems(files, loaded.config, head.text, loaded.generated)
        : [{ file: CONFIG_PATH, line: 1, column: 1, message: TREE_TOO_LARGE }]),
    );
    warnings.push(
      ...(await soakHealthWarnings(deps, loaded.config, head.text, () => deps.github.defaultBranch())),
    );
  }
  let output = withGenerated(formatConfigCheck(CONFIG_PATH, problems, warnings), loaded);
  // Who gains or loses promote rights (a commit SHA names its tree to the Git Data API).
  if (loaded.ok && (input.listCut || touchesRights(input.changedFiles) || ownedByFiles(loaded.config)))
    output = await withRightsChanges(deps, output, { config: loaded.config, treeSha: input.headSha });
  await deps.github.createCheckRun({ name: CONFIG_CHECK_NAME, headSha: input.headSha, ...output });
  return output.conclusion;
}

/**
 * A push to the default branch that touched the config: a broken config gets its issue upserted
 * (by loadRepoConfig) and the check; a fixed one closes the issue. A valid config's check carries
 * the same reference warnings as a PR's, read from the base tree the sync lists next anyway.
 * Returns whether the config is usable.
 */
export async function checkConfigOnDefaultBranch(
  deps: AppDeps<ConfigReading & GitHubChecks & GitHubComments & GitHubDeployments>,
  input: { branch: string; headSha: string },
): Promise<boolean> {
  const loaded = await loadRepoConfig(deps, input.branch);
  const problems = loaded.ok || loaded.reason === "missing" ? [] : loaded.problems;
  const warnings: ReferenceProblem[] = [];
  if (loaded.ok) {
    warnings.push(...configWarnings(loaded.warnings));
    const files = repoFileSource(deps.github, loaded.base.treeSha);
    try {
      const text = await files.readFile(CONFIG_PATH);
      warnings.push(...(await referenceProblems(files, loaded.config, text, loaded.generated)));
      warnings.push(...(await soakHealthWarnings(deps, loaded.config, text, input.branch)));
    } catch (error) {
      // loadRepoConfig already read the config (refusing links); a tree too large to list is the
      // one way its blob can be out of reach here.
      if (!isUserError(error) || error.code !== "tree-too-large") throw error;
      warnings.push({ file: CONFIG_PATH, line: 1, column: 1, message: TREE_TOO_LARGE });
    }
  }
  await deps.github.createCheckRun({
    name: CONFIG_CHECK_NAME,
    headSha: input.headSha,
    ...withGenerated(formatConfigCheck(CONFIG_PATH, problems, warnings), loaded),
  });
  if (loaded.ok) await closeBrokenConfigIssue(deps);
  return loaded.ok;
}

/** An image's rights follow its files (`codeowners: true`): moving a reference can change them. */
function ownedByFiles(config: FerryConfig): boolean {
  return needsCodeowners(config, Object.keys(config.images));
}

/** A valid config's check also lists what it generates (docs/config.md "Generated images and environments"). */
function withGenerated<T extends { summary: string }>(
  output: T,
  loaded: { ok: boolean; generated?: GeneratedEntry[]; shadowed?: GeneratedEntry[] },
): T {
  const lines = loaded.ok
    ? formatGenerated(loaded.generated ?? [], loaded.shadowed ?? [], { markdown: true })
    : [];
  return lines.length === 0 ? output : { ...output, summary: [output.summary, "", ...lines].join("\n") };
}

/** The config's own warnings (e.g. `auth: github` on GHCR), placed in the config file. */
export function configWarnings(warnings: ConfigProblem[]): ReferenceProblem[] {
  return warnings.map((warning) => ({
    file: CONFIG_PATH,
    line: warning.line,
    column: warning.column,
    message: warning.message,
  }));
}

/** Files a PR may add a plaintext Secret with: manifests and kustomizations, and generator sources. */
const ENVIRONMENT_FILE = /(\.ya?ml|\.env|\/Kustomization)$/i;

const TREE_TOO_LARGE =
  "the repository tree is too large to list in one request: image references were not checked";

/**
 * The config text at the PR head, from the head's tree (then the environment files cost no
 * further tree request), or undefined when the PR deletes it. A tree too large to list falls back
 * to the contents API, and only the schema is checked. A link in place of the config, or a config
 * too large to read, is reported by the check (failure, with the reason) rather than followed or
 * dropped (docs/reliability.md row 15).
 */
async function readHeadConfig(
  deps: AppDeps<GitHubContents>,
  files: FileSource,
  headSha: string,
): Promise<{ text: string; treeListed: boolean } | { problem: ConfigProblem } | undefined> {
  try {
    try {
      return { text: await files.readFile(CONFIG_PATH), treeListed: true };
    } catch (error) {
      if (!isUserError(error) || error.code !== "tree-too-large") throw error;
    }
    const text = await deps.github.readFile(headSha, CONFIG_PATH);
    return text === undefined ? undefined : { text, treeListed: false };
  } catch (error) {
    if (!isUserError(error)) throw error;
    if (error.code === "file-not-found") return undefined;
    if (error.code === "unsafe-path")
      return { problem: { path: "", message: errorText(error, deps.secrets), line: 1, column: 1 } };
    if (error.code === "file-too-large")
      return {
        problem: {
          path: "",
          message: `config is larger than ${MAX_CONFIG_BYTES} bytes, too large to read`,
          line: 1,
          column: 1,
        },
      };
    throw error;
  }
}

/**
 * `ferry check`'s reference check over a commit's files: each environment's YAML files (links
 * refused, never followed), then checkReferences. An environment whose paths cannot be read gets
 * one problem on its `paths` line instead of one per image.
 */
export async function referenceProblems(
  files: FileSource,
  config: FerryConfig,
  configText: string,
  generated: readonly GeneratedEntry[] = [],
): Promise<ReferenceProblem[]> {
  const problems: ReferenceProblem[] = [];
  const filesByEnvironment = new Map<string, Map<string, string>>();
  for (const [name, environment] of Object.entries(config.environments)) {
    try {
      const paths = await files.listFiles(environment.paths);
      if (paths.length === 0) {
        // Said once, plainly, rather than as "not referenced" for every image.
        problems.push({
          file: CONFIG_PATH,
          ...environmentPathsPosition(configText, name),
          message: `environment ${name}: no YAML files under ${environment.paths.join(", ")}`,
        });
        continue;
      }
      const texts = await Promise.all(paths.map((path) => files.readFile(path)));
      filesByEnvironment.set(name, new Map(paths.map((path, index) => [path, texts[index]!])));
    } catch (error) {
      if (!isUserError(error)) throw error;
      problems.push({
        file: CONFIG_PATH,
        ...environmentPathsPosition(configText, name),
        message: `environment ${name}: ${error.message}`,
      });
    }
  }
  const readable: FerryConfig = {
    ...config,
    environments: Object.fromEntries(
      Object.entries(config.environments).filter(([name]) => filesByEnvironment.has(name)),
    ),
  };
  return [
    ...problems,
    ...checkReferences(readable, filesByEnvironment, configText, generated),
    ...checkRemoteBases(readable, filesByEnvironment, configText),
    ...(await secretProblems(files, filesByEnvironment)),
  ].sort(byPosition);
}

/** Plaintext Secrets in every environment's files, secretGenerator sources read (bounded) from the same commit. */
async function secretProblems(
  files: FileSource,
  filesByEnvironment: Map<string, Map<string, string>>,
): Promise<ReferenceProblem[]> {
  const all = new Map<string, string>();
  for (const environmentFiles of filesByEnvironment.values())
    for (const [path, text] of environmentFiles) all.set(path, text);
  const sources = new Map<string, string | undefined>();
  const wanted = [...all].flatMap(([path, text]) =>
    secretGeneratorSources(path, text).map((source) => source.path),
  );
  for (const path of [...new Set(wanted)].slice(0, MAX_GENERATOR_SOURCES)) {
    try {
      // Named exactly, a file of any extension is listed (and a link refused) by the file source.
      const text =
        all.get(path) ??
        ((await files.listFiles([path])).includes(path) ? await files.readFile(path) : undefined);
      sources.set(path, text);
    } catch (error) {
      if (!isUserError(error)) throw error;
      sources.set(path, undefined); // absent or a link: kustomize itself refuses to build then
    }
  }
  return plaintextSecretProblems(all, sources);
}
