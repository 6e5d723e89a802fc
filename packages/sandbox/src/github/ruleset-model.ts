/**
 * Repository rulesets as data: the REST request body read into a `Ruleset`
 * (https://docs.github.com/en/rest/repos/rules#create-a-repository-ruleset) and the ruleset
 * shape the REST API and the `repository_ruleset` webhook answer with.
 */
import type { Repo, Ruleset, RulesetBypassActor, RulesetRule } from "./model.js";
import { validationFailed } from "./router.js";
import type { ShapeContext } from "./shapes.js";
import { nodeIdFor } from "./shapes.js";

/** The branch rules the emulator knows; any other type is refused (422). */
export const RULE_TYPES = new Set([
  "creation",
  "update",
  "deletion",
  "non_fast_forward",
  "pull_request",
  "required_linear_history",
  "required_signatures",
  "required_status_checks",
  "merge_queue",
]);
const ENFORCEMENTS = new Set(["active", "disabled", "evaluate"]);
const ACTOR_TYPES = new Set([
  "Integration",
  "OrganizationAdmin",
  "RepositoryRole",
  "Team",
  "DeployKey",
  "User",
]);
const BYPASS_MODES = new Set(["always", "pull_request", "exempt"]);

/** The fields a REST body sets, each validated (undefined when the body leaves it out). */
export interface RulesetFields {
  name?: string;
  enforcement?: Ruleset["enforcement"];
  conditions?: Ruleset["conditions"];
  bypassActors?: RulesetBypassActor[];
  rules?: RulesetRule[];
}

const invalid = (message: string) => validationFailed(`Invalid request.\n\n${message}`);

function strings(value: unknown, what: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string"))
    throw invalid(`${what} must be an array of strings.`);
  return value as string[];
}

/** Reads a create (`required`) or update body; throws 422 like GitHub on a bad field. */
export function readRulesetBody(body: Record<string, unknown>, required: boolean): RulesetFields {
  const fields: RulesetFields = {};
  if (body.name !== undefined || required) {
    if (typeof body.name !== "string" || body.name === "") throw invalid('"name" wasn\'t supplied.');
    fields.name = body.name;
  }
  if (body.target !== undefined && body.target !== "branch")
    throw invalid("Only branch rulesets are modelled by the emulator (target: branch).");
  if (body.enforcement !== undefined || required) {
    if (typeof body.enforcement !== "string" || !ENFORCEMENTS.has(body.enforcement))
      throw invalid(
        `${JSON.stringify(body.enforcement ?? null)} is not a member of ["disabled", "active", "evaluate"].`,
      );
    fields.enforcement = body.enforcement as Ruleset["enforcement"];
  }
  if (body.conditions !== undefined) {
    const refName = (body.conditions as { ref_name?: { include?: unknown; exclude?: unknown } } | null)
      ?.ref_name;
    fields.conditions = {
      include: strings(refName?.include, "conditions.ref_name.include"),
      exclude: strings(refName?.exclude, "conditions.ref_name.exclude"),
    };
  }
  if (body.bypass_actors !== undefined) {
    if (!Array.isArray(body.bypass_actors)) throw invalid("bypass_actors must be an array.");
    fields.bypassActors = body.bypass_actors.map((raw) => {
      const actor = (raw ?? {}) as { actor_id?: unknown; actor_type?: unknown; bypass_mode?: unknown };
      if (typeof actor.actor_type !== "string" || !ACTOR_TYPES.has(actor.actor_type))
        throw invalid(`Invalid actor_type ${JSON.stringify(actor.actor_type ?? null)}.`);
      const mode = actor.bypass_mode ?? "always";
      if (typeof mode !== "string" || !BYPASS_MODES.has(mode))
        throw invalid(`Invalid bypass_mode ${JSON.stringify(mode)}.`);
      const id = actor.actor_id ?? null;
      if (id !== null && typeof id !== "number") throw invalid("actor_id must be an integer.");
      if (id === null && !["OrganizationAdmin", "DeployKey"].includes(actor.actor_type))
        throw invalid(`actor_id is required for actor_type ${actor.actor_type}.`);
      return {
        actorId: id,
        actorType: actor.actor_type as RulesetBypassActor["actorType"],
        bypassMode: mode as RulesetBypassActor["bypassMode"],
      };
    });
  }
  if (body.rules !== undefined) {
    if (!Array.isArray(body.rules)) throw invalid("rules must be an array.");
    fields.rules = body.rules.map((raw) => {
      const rule = (raw ?? {}) as { type?: unknown; parameters?: unknown };
      if (typeof rule.type !== "string" || !RULE_TYPES.has(rule.type))
        throw invalid(`Invalid rule type ${JSON.stringify(rule.type ?? null)}.`);
      const parameters =
        rule.parameters && typeof rule.parameters === "object"
          ? (rule.parameters as Record<string, unknown>)
          : undefined;
      if (rule.type === "required_status_checks" && !Array.isArray(parameters?.required_status_checks))
        throw invalid("required_status_checks rule needs parameters.required_status_checks.");
      return { type: rule.type, ...(parameters ? { parameters } : {}) };
    });
  }
  return fields;
}

/** Sets the fields a rule list implies (required checks, strict policy, merge queue). */
export function applyRules(ruleset: Ruleset, rules: RulesetRule[]): void {
  ruleset.rules = rules;
  const checks = rules.filter((rule) => rule.type === "required_status_checks");
  ruleset.requiredChecks = [
    ...new Set(
      checks.flatMap((rule) =>
        ((rule.parameters?.required_status_checks ?? []) as { context?: string }[]).flatMap((check) =>
          typeof check.context === "string" ? [check.context] : [],
        ),
      ),
    ),
  ];
  ruleset.strict = checks.some((rule) => rule.parameters?.strict_required_status_checks_policy === true);
  const queue = rules.find((rule) => rule.type === "merge_queue");
  const method = queue?.parameters?.merge_method;
  if (queue) ruleset.mergeQueue = { method: method === "MERGE" || method === "REBASE" ? method : "SQUASH" };
  else delete ruleset.mergeQueue;
}

/** A new ruleset from validated fields. */
export function newRuleset(id: number, fields: Required<RulesetFields>, now: string): Ruleset {
  const ruleset: Ruleset = {
    id,
    name: fields.name,
    enforcement: fields.enforcement,
    conditions: fields.conditions,
    bypassActors: fields.bypassActors,
    rules: [],
    requiredChecks: [],
    strict: false,
    createdAt: now,
    updatedAt: now,
  };
  applyRules(ruleset, fields.rules);
  return ruleset;
}

/** The `repository-ruleset` shape (REST answers and the webhook's `repository_ruleset`). */
export function rulesetShape(
  c: ShapeContext,
  repo: Repo,
  ruleset: Ruleset,
  currentUserCanBypass?: "always" | "pull_requests_only" | "never" | "exempt",
) {
  return {
    id: ruleset.id,
    name: ruleset.name,
    target: "branch" as const,
    source_type: "Repository" as const,
    source: `${repo.owner}/${repo.name}`,
    enforcement: ruleset.enforcement,
    bypass_actors: ruleset.bypassActors.map((actor) => ({
      actor_id: actor.actorId,
      actor_type: actor.actorType,
      bypass_mode: actor.bypassMode,
    })),
    ...(currentUserCanBypass ? { current_user_can_bypass: currentUserCanBypass } : {}),
    node_id: nodeIdFor("RRS", ruleset.id),
    _links: {
      self: { href: `${c.api}/repos/${repo.owner}/${repo.name}/rulesets/${ruleset.id}` },
      html: { href: `${c.web}/${repo.owner}/${repo.name}/rules/${ruleset.id}` },
    },
    conditions: {
      ref_name: { include: [...ruleset.conditions.include], exclude: [...ruleset.conditions.exclude] },
    },
    rules: ruleset.rules.map((rule) => ({ ...rule })),
    created_at: ruleset.createdAt,
    updated_at: ruleset.updatedAt,
  };
}
