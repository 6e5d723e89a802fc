import type { FerryConfig } from "../config/schema.js";
import type { Owners } from "./codeowners.js";
import { describeRule, imageRule, type ImageRule } from "./image-rights.js";

/**
 * Who may promote what under one config (and CODEOWNERS), and what a PR changes about it: the
 * `ferry/config` check lists who gains or loses rights, so that a team cannot grant itself rights
 * unseen (docs/config.md "Who may promote what").
 */
export interface EnvironmentRights {
  permission: string;
  teams: string[];
  /** Images with a rule of their own; the others follow the environment's rule alone. */
  images: Record<string, ImageRule>;
}

export type RightsTable = Record<string, EnvironmentRights>;

/** At most this many lines of changes are listed. */
export const MAX_RIGHTS_LINES = 100;

export function rightsTable(
  config: FerryConfig,
  ownersFor: (environment: string, image: string) => (Owners & { path?: string }) | undefined,
): RightsTable {
  const table: RightsTable = {};
  for (const [name, environment] of Object.entries(config.environments)) {
    const images: Record<string, ImageRule> = {};
    for (const image of Object.keys(config.images)) {
      const rule = imageRule(config, image, ownersFor(name, image));
      if (rule) images[image] = rule;
    }
    table[name] = {
      permission: environment.promoters?.permission ?? "maintain",
      teams: [...(environment.promoters?.teams ?? [])].sort(),
      images,
    };
  }
  return table;
}

/** The changes from `base` to `head`, one line each (empty: nobody gains or loses anything). */
export function rightsChanges(base: RightsTable, head: RightsTable): string[] {
  const lines: string[] = [];
  const environments = [...new Set([...Object.keys(base), ...Object.keys(head)])].sort();
  for (const name of environments) {
    const before = base[name];
    const after = head[name];
    if (!before || !after) {
      const present = (before ?? after)!;
      lines.push(`${name}: ${before ? "removed" : "new"}, promoted by ${environmentWho(present)}`);
      continue;
    }
    if (before.permission !== after.permission)
      lines.push(`${name}: least permission ${before.permission} → ${after.permission}`);
    lines.push(...membersChange(name, "members of", before.teams, after.teams));
    const images = [...new Set([...Object.keys(before.images), ...Object.keys(after.images)])].sort();
    for (const image of images) {
      const was = before.images[image];
      const now = after.images[image];
      const where = `${name} / ${image}`;
      if (!was) lines.push(`${where}: now only ${describeRule(now!)} (was anyone ${name} admits)`);
      else if (!now) lines.push(`${where}: now anyone ${name} admits (was only ${describeRule(was)})`);
      else {
        lines.push(...membersChange(where, "members of", was.teams, now.teams));
        lines.push(...membersChange(where, "", was.users, now.users));
      }
    }
  }
  if (lines.length <= MAX_RIGHTS_LINES) return lines;
  return [...lines.slice(0, MAX_RIGHTS_LINES), `… and ${lines.length - MAX_RIGHTS_LINES} more changes`];
}

function environmentWho(rights: EnvironmentRights): string {
  const teams =
    rights.teams.length > 0 ? ` or members of ${rights.teams.map((t) => `@${t}`).join(", ")}` : "";
  return `${rights.permission} permission${teams}`;
}

function membersChange(where: string, kind: string, before: string[], after: string[]): string[] {
  const lower = (list: string[]) => new Set(list.map((name) => name.toLowerCase()));
  const had = lower(before);
  const has = lower(after);
  const gained = after.filter((name) => !had.has(name.toLowerCase()));
  const lost = before.filter((name) => !has.has(name.toLowerCase()));
  const names = (list: string[]) => `${kind ? `${kind} ` : ""}${list.map((name) => `@${name}`).join(", ")}`;
  const lines: string[] = [];
  if (gained.length > 0) lines.push(`${where}: ${names(gained)} may now promote`);
  if (lost.length > 0) lines.push(`${where}: ${names(lost)} may no longer promote`);
  return lines;
}
