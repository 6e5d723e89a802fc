import type { Permission } from "../core/config/schema.js";
import { UserError } from "../core/errors.js";
import { imageRule, refusalText, ruledImages, unmetRules } from "../core/rights/image-rights.js";
import type { AppDeps, LoadedConfig } from "./app-deps.js";
import type { GitHubAccess, GitHubContents } from "./github-port.js";
import { ownersByEnvironment } from "./image-owners.js";
import { currentImages } from "./plan-environment.js";
import { repoFileSource } from "./repo-files.js";

/**
 * The image half of the live permission check (docs/config.md "Who may promote what"): after the
 * environment's rule passed, every image the command touches that has `promoters` of its own must
 * admit the actor too. Rules, CODEOWNERS and the files they point at are read at the default
 * branch's tree the command's config came from, never at a PR's head. Costs nothing when no image
 * has a rule; a repository admin passes without further requests.
 */
export async function authorizeImages(
  deps: AppDeps<GitHubAccess & GitHubContents>,
  loaded: LoadedConfig,
  input: {
    login: string;
    /** The actor's repository permission, as the environment check read it. */
    permission: Permission | "none";
    environment: string;
    /** What the command changes, or `environment`: every image the environment's files reference. */
    images: string[] | "environment";
    verb: string;
  },
): Promise<void> {
  const { config } = loaded;
  if (ruledImages(config, Object.keys(config.images)).length === 0 || input.permission === "admin") return;
  const images =
    input.images === "environment"
      ? Object.keys(
          await currentImages(repoFileSource(deps.github, loaded.base.treeSha), config, input.environment),
        )
      : input.images;
  const ruled = ruledImages(config, images);
  if (ruled.length === 0) return;
  const owners = await ownersByEnvironment(
    deps.github,
    loaded.base.treeSha,
    config,
    [input.environment],
    ruled,
  );
  const rules = ruled.map((image) => imageRule(config, image, owners(input.environment, image))!);
  const unmet = await unmetRules(rules, {
    login: input.login,
    admin: false,
    isMember: (team) => deps.github.isTeamMember(team, input.login),
  });
  if (unmet.length > 0) throw new UserError("forbidden", refusalText(input.verb, input.environment, unmet));
}
