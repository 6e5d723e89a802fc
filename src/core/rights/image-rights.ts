import type { FerryConfig } from "../config/schema.js";
import type { Owners } from "./codeowners.js";

/**
 * Who may change an image in an environment (docs/config.md "Who may promote what"). The
 * environment's `promoters` rule is checked first and always applies; an image with its own
 * `promoters` then also needs the actor to be a repository admin, one of its users, a member of one
 * of its teams, or (with `codeowners: true`) an owner of the environment's files that reference it.
 * A command touching several images needs every one of them.
 */
export interface ImageRule {
  image: string;
  users: string[];
  teams: string[];
  /** `codeowners: true`: the owners are among `users`/`teams`; the file they came from, if any. */
  codeowners?: { path: string | undefined };
}

/** An image's rule in an environment, or undefined when only the environment's rule applies. */
export function imageRule(
  config: FerryConfig,
  image: string,
  owners?: Owners & { path?: string },
): ImageRule | undefined {
  const promoters = config.images[image]?.promoters;
  if (!promoters) return undefined;
  const users = new Map<string, string>();
  const teams = new Map<string, string>();
  const add = (into: Map<string, string>, names: string[]) => {
    for (const name of names) if (!into.has(name.toLowerCase())) into.set(name.toLowerCase(), name);
  };
  add(users, promoters.users);
  add(teams, promoters.teams);
  if (promoters.codeowners && owners) {
    add(users, owners.users);
    add(teams, owners.teams);
  }
  const rule: ImageRule = {
    image,
    users: [...users.values()].sort(),
    teams: [...teams.values()].sort(),
  };
  if (promoters.codeowners) rule.codeowners = { path: owners?.path };
  return rule;
}

/** Images whose rule needs the CODEOWNERS file. */
export function needsCodeowners(config: FerryConfig, images: string[]): boolean {
  return images.some((image) => config.images[image]?.promoters?.codeowners === true);
}

/** Images of the list with a rule of their own. */
export function ruledImages(config: FerryConfig, images: string[]): string[] {
  return images.filter((image) => config.images[image]?.promoters !== undefined);
}

export interface Actor {
  login: string;
  admin: boolean;
  /** Live team membership (`org/slug`). */
  isMember(team: string): Promise<boolean>;
}

/** The rules `actor` does not meet (none: allowed). Each team is asked about once. */
export async function unmetRules(rules: ImageRule[], actor: Actor): Promise<ImageRule[]> {
  if (actor.admin) return [];
  const asked = new Map<string, Promise<boolean>>();
  const member = (team: string): Promise<boolean> => {
    const key = team.toLowerCase();
    let answer = asked.get(key);
    if (!answer) {
      answer = actor.isMember(team);
      asked.set(key, answer);
    }
    return answer;
  };
  const unmet: ImageRule[] = [];
  const login = actor.login.toLowerCase();
  for (const rule of rules) {
    if (rule.users.some((user) => user.toLowerCase() === login)) continue;
    let allowed = false;
    for (const team of rule.teams) if ((allowed = await member(team))) break;
    if (!allowed) unmet.push(rule);
  }
  return unmet;
}

/** Who a rule admits, in words: "members of @acme/team-b, @mona or a repository admin". */
export function describeRule(rule: ImageRule): string {
  const names = [
    ...(rule.teams.length > 0 ? [`members of ${rule.teams.map((team) => `@${team}`).join(", ")}`] : []),
    ...rule.users.map((user) => `@${user}`),
  ];
  if (names.length > 0) return `${names.join(", ")} or a repository admin`;
  const why = !rule.codeowners
    ? ""
    : rule.codeowners.path
      ? ` (${rule.codeowners.path} names no owner of its files)`
      : " (there is no CODEOWNERS file on the default branch)";
  return `a repository admin${why}`;
}

/** The one-line refusal naming each image and who may change it. */
export function refusalText(verb: string, environment: string, unmet: ImageRule[]): string {
  if (unmet.length === 1)
    return `you may not ${verb} ${unmet[0]!.image} in ${environment}: only ${describeRule(unmet[0]!)} may`;
  const shown = unmet.slice(0, 10).map((rule) => `${rule.image}: only ${describeRule(rule)}`);
  const more = unmet.length > shown.length ? `; and ${unmet.length - shown.length} more` : "";
  return `you may not ${verb} these images in ${environment} (${shown.join("; ")}${more})`;
}

/**
 * Reviewers of an environment's PR that changes `images`: the environment's, then each image's own
 * (`images.<name>.reviewers`), each once (GitHub logins and team slugs are case-insensitive).
 */
export function pullReviewers(
  config: FerryConfig,
  environment: string,
  images: string[],
): { users: string[]; teams: string[] } {
  const users = new Map<string, string>();
  const teams = new Map<string, string>();
  const add = (into: Map<string, string>, names: string[] = []) => {
    for (const name of names) if (!into.has(name.toLowerCase())) into.set(name.toLowerCase(), name);
  };
  const own = config.environments[environment]?.reviewers;
  add(users, own?.users);
  add(teams, own?.teams);
  for (const image of images) {
    add(users, config.images[image]?.reviewers?.users);
    add(teams, config.images[image]?.reviewers?.teams);
  }
  return { users: [...users.values()], teams: [...teams.values()] };
}
