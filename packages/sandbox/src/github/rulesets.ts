/**
 * Repository rulesets enforced on ref writes (`POST/PATCH/DELETE /git/refs`), as GitHub does
 * (https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/managing-rulesets/available-rules-for-rulesets).
 * A write that breaks a rule of an active ruleset covering the ref, by an actor not on the
 * ruleset's bypass list, is refused with 422 and GitHub's text: "Repository rule violations
 * found\n\n" and one paragraph per broken rule (the texts of GitHub's refusals, e.g. "Cannot
 * create ref due to creations being restricted.", googleapis/release-please-action#1194,
 * "Changes must be made through a pull request.", "Commits must have verified signatures.").
 */
import { isVerified } from "./commit-signing.js";
import { roleOf, rulesetsFor } from "./emulator-repos.js";
import type { GitHubEmulator } from "./emulator.js";
import { roleAtLeast, type Actor, type Repo, type RepoRole, type Ruleset } from "./model.js";
import { validationFailed } from "./router.js";

/** `RepositoryRole` bypass actor ids GitHub gives the base roles. */
export const REPOSITORY_ROLE_IDS: Record<number, RepoRole> = { 2: "maintain", 4: "write", 5: "admin" };

/** How far back new commits are looked at for linear history and signatures. */
const MAX_NEW_COMMITS = 1000;

/** Whether `actor` is on the ruleset's bypass list for a direct ref write (mode `always`/`exempt`). */
export function canBypass(emu: GitHubEmulator, actor: Actor, repo: Repo, ruleset: Ruleset): boolean {
  return ruleset.bypassActors.some((entry) => {
    if (entry.bypassMode === "pull_request") return false;
    switch (entry.actorType) {
      case "Integration":
        return actor.kind === "installation" && actor.appId === entry.actorId;
      case "User":
        return actor.kind === "user" && emu.findAccount(actor.login)?.id === entry.actorId;
      case "RepositoryRole": {
        const role = entry.actorId === null ? undefined : REPOSITORY_ROLE_IDS[entry.actorId];
        if (actor.kind !== "user" || !role) return false;
        const has = roleOf(emu, repo, actor.login);
        return has !== "none" && roleAtLeast(has, role);
      }
      case "OrganizationAdmin":
        return actor.kind === "user" && actor.login === repo.owner;
      case "Team":
        return (
          actor.kind === "user" &&
          [...emu.teams.values()].some((team) => team.id === entry.actorId && team.members.has(actor.login))
        );
      default:
        return false;
    }
  });
}

/** What the caller sees of its bypass for `GET /rulesets/{id}` (`current_user_can_bypass`). */
export function currentUserCanBypass(
  emu: GitHubEmulator,
  actor: Actor,
  repo: Repo,
  ruleset: Ruleset,
): "always" | "pull_requests_only" | "never" {
  if (canBypass(emu, actor, repo, ruleset)) return "always";
  const onPulls = canBypass(emu, actor, repo, {
    ...ruleset,
    bypassActors: ruleset.bypassActors.map((entry) => ({ ...entry, bypassMode: "always" })),
  });
  return onPulls ? "pull_requests_only" : "never";
}

/** Commits `after` brings to the ref: those not reachable from `before` (or, for a new branch, from the default branch). */
async function newCommits(repo: Repo, before: string | undefined, after: string): Promise<string[]> {
  const from = before ?? (await repo.git.readRef(`refs/heads/${repo.defaultBranch}`));
  const commits = from
    ? await repo.git.commitsBetween(from, after)
    : await repo.git.log(after, { max: MAX_NEW_COMMITS });
  return commits.slice(-MAX_NEW_COMMITS);
}

function found(text: string, shas: string[]): string {
  return `${text}\nFound ${shas.length} violation${shas.length === 1 ? "" : "s"}:\n\n${shas.map((sha) => `  ${sha}`).join("\n")}`;
}

/**
 * Throws GitHub's 422 when the write of `ref` from `before` to `after` (undefined: absent) breaks
 * a rule no bypass lets this actor break. Only branches (`refs/heads/…`) carry branch rulesets.
 */
export async function refuseRuleViolations(
  emu: GitHubEmulator,
  actor: Actor,
  repo: Repo,
  ref: string,
  before: string | undefined,
  after: string | undefined,
): Promise<void> {
  if (!ref.startsWith("refs/heads/")) return;
  const rulesets = rulesetsFor(repo, ref.slice("refs/heads/".length)).filter(
    (ruleset) => !canBypass(emu, actor, repo, ruleset),
  );
  const types = new Set(rulesets.flatMap((ruleset) => ruleset.rules.map((rule) => rule.type)));
  if (types.size === 0) return;
  const violations: string[] = [];
  if (before === undefined && types.has("creation"))
    violations.push("Cannot create ref due to creations being restricted.");
  if (after === undefined && types.has("deletion")) violations.push("Cannot delete this protected ref.");
  if (before !== undefined && after !== undefined) {
    if (types.has("update")) violations.push("Cannot update this protected ref.");
    if (types.has("non_fast_forward") && !(await repo.git.isAncestor(before, after)))
      violations.push("Cannot force-push to this branch.");
    if (types.has("pull_request")) violations.push("Changes must be made through a pull request.");
  }
  if (after !== undefined && (types.has("required_linear_history") || types.has("required_signatures"))) {
    const commits = await newCommits(repo, before, after);
    if (types.has("required_linear_history")) {
      const merges: string[] = [];
      for (const sha of commits) if ((await repo.git.readCommit(sha)).parents.length > 1) merges.push(sha);
      if (merges.length > 0) violations.push(found("This branch must not contain merge commits.", merges));
    }
    if (types.has("required_signatures")) {
      const unsigned = commits.filter((sha) => !isVerified(repo, sha));
      if (unsigned.length > 0) violations.push(found("Commits must have verified signatures.", unsigned));
    }
  }
  if (violations.length > 0)
    throw validationFailed(
      `Repository rule violations found\n\n${violations.map((v) => `${v}\n\n`).join("")}`,
    );
}
