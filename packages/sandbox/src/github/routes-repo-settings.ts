/**
 * `PATCH /repos/{owner}/{repo}` (https://docs.github.com/en/rest/repos/repos#update-a-repository):
 * the repository settings people set before pointing a bot at it. Only a repository admin may
 * change them ("Must have admin rights to Repository.", 403; a private repository one cannot see
 * answers 404), an app only with `administration: write`. The emulator keeps the settings it
 * models and refuses, naming it, a documented field it does not model (GitHub would keep it), so
 * that a sandbox never pretends to honour a setting.
 */
import { authorize, roleOf } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import type { Repo } from "./model.js";
import { ApiError, validationFailed, type RequestContext } from "./router.js";
import * as shape from "./shapes.js";

/** Boolean settings the emulator models, by the body field that sets them. */
const FLAGS = {
  has_issues: "hasIssues",
  allow_merge_commit: "allowMergeCommit",
  allow_squash_merge: "allowSquashMerge",
  allow_rebase_merge: "allowRebaseMerge",
  allow_auto_merge: "allowAutoMerge",
  delete_branch_on_merge: "deleteBranchOnMerge",
  private: "private",
} as const satisfies Record<string, keyof Repo>;

/** Fields GitHub documents for this endpoint that the emulator does not model. */
const UNMODELED = [
  "name",
  "homepage",
  "visibility",
  "security_and_analysis",
  "has_projects",
  "has_wiki",
  "is_template",
  "default_branch",
  "allow_update_branch",
  "use_squash_pr_title_as_default",
  "squash_merge_commit_title",
  "squash_merge_commit_message",
  "merge_commit_title",
  "merge_commit_message",
  "archived",
  "allow_forking",
  "web_commit_signoff_required",
];

export function registerRepoSettingsRoutes(emu: GitHubEmulator): void {
  emu.router.add("PATCH", "/repos/:owner/:repo", (ctx) => {
    const repo = authorizeAdmin(emu, ctx);
    const body = ctx.body;
    for (const field of UNMODELED)
      if (field in body)
        throw validationFailed(`Invalid request.\n\nThe GitHub emulator does not model "${field}".`);
    for (const field of Object.keys(FLAGS))
      if (field in body && typeof body[field] !== "boolean")
        throw validationFailed(
          `Invalid request.\n\nFor 'properties/${field}', ${JSON.stringify(body[field])} is not a boolean.`,
        );
    if ("description" in body && body.description !== null && typeof body.description !== "string")
      throw validationFailed(
        `Invalid request.\n\nFor 'properties/description', ${JSON.stringify(body.description)} is not a string or null.`,
      );
    const merged = (field: "allow_merge_commit" | "allow_squash_merge" | "allow_rebase_merge") =>
      field in body ? (body[field] as boolean) : repo[FLAGS[field]];
    // The whole resulting state is judged (seen on github.com as this 422).
    if (!merged("allow_merge_commit") && !merged("allow_squash_merge") && !merged("allow_rebase_merge"))
      throw validationFailed("Validation Failed", [
        {
          resource: "Repository",
          field: "merge_commit_allowed",
          code: "invalid",
          message: "Sorry, you need to allow at least one merge strategy. (no_merge_method)",
        },
      ]);
    for (const [field, key] of Object.entries(FLAGS)) if (field in body) repo[key] = body[field] as boolean;
    if ("description" in body) repo.description = body.description as string | null;
    repo.updatedAt = emu.now();
    const answer: Record<string, unknown> = shape.repository(emu.shapes, repo);
    if (ctx.actor.kind === "user")
      answer.permissions = { admin: true, maintain: true, push: true, triage: true, pull: true };
    return { body: answer };
  });
}

function authorizeAdmin(emu: GitHubEmulator, ctx: RequestContext): Repo {
  const repo = emu.findRepo(ctx.params.owner ?? "", ctx.params.repo ?? "");
  if (!repo) throw new ApiError(404, "Not Found");
  if (ctx.actor.kind !== "user") {
    authorize(emu, ctx.actor, repo, "administration", "write", "admin");
    return repo;
  }
  const role = roleOf(emu, repo, ctx.actor.login);
  if (role === "none" && repo.private) throw new ApiError(404, "Not Found");
  if (role !== "admin") throw new ApiError(403, "Must have admin rights to Repository.");
  return repo;
}
