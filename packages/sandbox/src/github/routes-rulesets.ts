/**
 * Repository rulesets over REST (https://docs.github.com/en/rest/repos/rules): list, create,
 * get, update, delete (`GET/POST /repos/{o}/{r}/rulesets`, `GET/PUT/DELETE …/rulesets/{id}`) and
 * the rules that apply to a branch (`GET /repos/{o}/{r}/rules/branches/{branch}`). Reading needs
 * only read access ("Metadata" read for an app); writing needs the repository admin role or an
 * app's "Administration" write. Each change sends the `repository_ruleset` webhook
 * (created/edited/deleted), which GitHub delivers to apps with "Administration" read.
 */
import { emit } from "./emulator-events.js";
import { authorizeRepo, rulesetsFor } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import type { Repo, Ruleset } from "./model.js";
import { ApiError, paginate, type RequestContext } from "./router.js";
import { applyRules, newRuleset, readRulesetBody, rulesetShape } from "./ruleset-model.js";
import { currentUserCanBypass } from "./rulesets.js";

export function registerRulesetRoutes(emu: GitHubEmulator): void {
  const r = emu.router;
  const shapeOf = (ctx: RequestContext, repo: Repo, ruleset: Ruleset) =>
    rulesetShape(emu.shapes, repo, ruleset, currentUserCanBypass(emu, ctx.actor, repo, ruleset));
  const find = (repo: Repo, id: string | undefined): Ruleset => {
    const ruleset = repo.rulesets.find((x) => String(x.id) === id);
    if (!ruleset) throw new ApiError(404, "Not Found");
    return ruleset;
  };
  const notify = (ctx: RequestContext, repo: Repo, action: string, ruleset: Ruleset, extra = {}) =>
    emit(
      emu,
      repo,
      "repository_ruleset",
      { action, repository_ruleset: rulesetShape(emu.shapes, repo, ruleset), ...extra },
      emu.actingLogin(ctx.actor),
    );

  r.add("GET", "/repos/:owner/:repo/rulesets", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "metadata", "read", "read");
    // The list carries each ruleset's summary; `GET …/rulesets/{id}` has its rules and conditions.
    return paginate(
      ctx,
      repo.rulesets.map((ruleset) => {
        const { conditions: _c, rules: _r, bypass_actors: _b, ...summary } = shapeOf(ctx, repo, ruleset);
        return summary;
      }),
    );
  });

  r.add("GET", "/repos/:owner/:repo/rulesets/:id", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "metadata", "read", "read");
    return { body: shapeOf(ctx, repo, find(repo, ctx.params.id)) };
  });

  r.add("POST", "/repos/:owner/:repo/rulesets", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "administration", "write", "admin");
    const fields = readRulesetBody(ctx.body, true);
    const ruleset = newRuleset(
      emu.id(),
      {
        name: fields.name!,
        enforcement: fields.enforcement!,
        conditions: fields.conditions ?? { include: [], exclude: [] },
        bypassActors: fields.bypassActors ?? [],
        rules: fields.rules ?? [],
      },
      new Date().toISOString(),
    );
    repo.rulesets.push(ruleset);
    notify(ctx, repo, "created", ruleset);
    return { status: 201, body: shapeOf(ctx, repo, ruleset) };
  });

  r.add("PUT", "/repos/:owner/:repo/rulesets/:id", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "administration", "write", "admin");
    const ruleset = find(repo, ctx.params.id);
    const fields = readRulesetBody(ctx.body, false);
    const changes: Record<string, unknown> = {};
    if (fields.name !== undefined && fields.name !== ruleset.name) changes.name = { from: ruleset.name };
    if (fields.enforcement !== undefined && fields.enforcement !== ruleset.enforcement)
      changes.enforcement = { from: ruleset.enforcement };
    if (fields.name !== undefined) ruleset.name = fields.name;
    if (fields.enforcement !== undefined) ruleset.enforcement = fields.enforcement;
    if (fields.conditions !== undefined) ruleset.conditions = fields.conditions;
    if (fields.bypassActors !== undefined) ruleset.bypassActors = fields.bypassActors;
    if (fields.rules !== undefined) {
      const key = (rule: { type: string }) => rule.type;
      const added = fields.rules.filter((rule) => !ruleset.rules.some((old) => key(old) === key(rule)));
      const deleted = ruleset.rules.filter((old) => !fields.rules!.some((rule) => key(old) === key(rule)));
      if (added.length + deleted.length > 0) changes.rules = { added, deleted, updated: [] };
      applyRules(ruleset, fields.rules);
    }
    ruleset.updatedAt = new Date().toISOString();
    notify(ctx, repo, "edited", ruleset, { changes });
    return { body: shapeOf(ctx, repo, ruleset) };
  });

  r.add("DELETE", "/repos/:owner/:repo/rulesets/:id", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "administration", "write", "admin");
    const ruleset = find(repo, ctx.params.id);
    repo.rulesets.splice(repo.rulesets.indexOf(ruleset), 1);
    notify(ctx, repo, "deleted", ruleset);
    return { status: 204 };
  });

  // Every rule of every active ruleset that covers the branch, each naming its ruleset; anyone
  // who can read the repository may ask (https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch).
  r.add("GET", "/repos/:owner/:repo/rules/branches/*branch", (ctx) => {
    const repo = authorizeRepo(emu, ctx, "metadata", "read", "read");
    const source = { ruleset_source_type: "Repository", ruleset_source: `${repo.owner}/${repo.name}` };
    const rules = rulesetsFor(repo, ctx.params.branch!).flatMap((ruleset) =>
      ruleset.rules.map((rule) => ({ ...rule, ...source, ruleset_id: ruleset.id })),
    );
    return paginate(ctx, rules);
  });
}
