import { UserError, isUserError } from "../core/errors.js";
import type { ExpandedConfigResult } from "../core/generate/validate-expansion.js";
import type { AppDeps } from "./app-deps.js";
import { loadExpandedConfig, type GenerationSource } from "./expand-repo-config.js";
import { repoFileSource } from "./repo-files.js";
import type { GitHubContents, TreeEntry } from "./github-port.js";
import type { FileSource } from "./plan-inputs.js";

/**
 * A commit's tree as a GenerationSource: its folders and blob SHAs from the one recursive tree
 * listing the loader and the planner read anyway (cached by SHA), its files through `files`
 * (repoFileSource over the same tree, blobs from the content cache): a steady scan costs no request
 * for generated config (docs/capacity.md "Generated config").
 */
export function repoGenerationSource(
  github: GitHubContents & { owner?: string; repo?: string },
  treeSha: string,
  files: FileSource,
): GenerationSource {
  let listing: Promise<Map<string, TreeEntry>> | undefined;
  const entries = (): Promise<Map<string, TreeEntry>> =>
    (listing ??= github.listTree(treeSha).then(
      (list) => new Map(list.map((entry) => [entry.path, entry])),
      (error: unknown) => {
        if (isUserError(error) && error.code === "tree-too-large")
          throw new UserError(
            "tree-too-large",
            "the repository's tree is too large to list in one request, and generated config needs its whole listing",
          );
        throw error;
      },
    ));
  const scope = github.owner !== undefined ? `${github.owner}/${github.repo ?? ""}` : treeSha;
  return {
    files,
    cacheScope: scope.toLowerCase(),
    async folders() {
      return [...(await entries()).values()]
        .filter((entry) => entry.type === "tree")
        .map((entry) => entry.path);
    },
    async blobSha(path) {
      try {
        return (await entries()).get(path)?.sha;
      } catch (error) {
        if (isUserError(error)) return undefined;
        throw error;
      }
    },
  };
}

/**
 * The config text of a commit loaded and expanded over that commit's tree: what every reader of a
 * commit's config sees (docs/config.md "Generated images and environments").
 */
export async function loadConfigAt(
  deps: Pick<AppDeps<GitHubContents & { owner?: string; repo?: string }>, "github" | "configContext">,
  text: string,
  treeSha: string,
  files: FileSource = repoFileSource(deps.github, treeSha),
): Promise<ExpandedConfigResult> {
  return loadExpandedConfig(text, repoGenerationSource(deps.github, treeSha, files), deps.configContext);
}
