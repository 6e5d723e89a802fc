import { NAME_PATTERN } from "../config/names.js";

/**
 * Ferry's branches, one per promotion unit (docs/architecture.md "GitHub conventions"):
 * - the environment's default unit: `ferry/<env>` (as before groups existed);
 * - a named group: `ferry-group/<env>/<group>`;
 * - one image (`grouping: image`): `ferry-image/<env>/<image>`.
 * Each kind has its own top folder and a fixed depth, so no two units' refs can ever collide in
 * git's ref namespace (`ferry/prod` and `ferry/prod/x` could not both exist), and a name reads
 * back to exactly one unit.
 */
const PREFIX = "ferry/";
const GROUP_PREFIX = "ferry-group/";
const IMAGE_PREFIX = "ferry-image/";
const NAME = NAME_PATTERN;

/** The part of a unit past its environment: a named group, or one image on its own. */
export type UnitGroup = { kind: "group"; name: string } | { kind: "image"; name: string };

export interface PromotionUnit {
  environment: string;
  /** Absent for the environment's default unit (`ferry/<env>`). */
  group?: UnitGroup;
}

export function formatBranchName(environment: string, group?: UnitGroup): string {
  if (!NAME.test(environment)) throw new Error(`invalid environment name ${JSON.stringify(environment)}`);
  if (!group) return `${PREFIX}${environment}`;
  if (!NAME.test(group.name)) throw new Error(`invalid ${group.kind} name ${JSON.stringify(group.name)}`);
  return `${group.kind === "group" ? GROUP_PREFIX : IMAGE_PREFIX}${environment}/${group.name}`;
}

/** The unit of a Ferry branch (`ferry/prod`, `refs/heads/ferry-group/prod/team-a`…), else undefined. */
export function parseUnitBranch(ref: string): PromotionUnit | undefined {
  const name = ref.startsWith("refs/heads/") ? ref.slice("refs/heads/".length) : ref;
  if (name.startsWith(PREFIX)) {
    const environment = name.slice(PREFIX.length);
    return NAME.test(environment) ? { environment } : undefined;
  }
  const kind = name.startsWith(GROUP_PREFIX) ? "group" : name.startsWith(IMAGE_PREFIX) ? "image" : undefined;
  if (kind === undefined) return undefined;
  const parts = name.slice((kind === "group" ? GROUP_PREFIX : IMAGE_PREFIX).length).split("/");
  if (parts.length !== 2 || !NAME.test(parts[0]!) || !NAME.test(parts[1]!)) return undefined;
  return { environment: parts[0]!, group: { kind, name: parts[1]! } };
}

/** The environment of any Ferry branch, else undefined. */
export function parseBranchName(ref: string): string | undefined {
  return parseUnitBranch(ref)?.environment;
}

/** The same unit group (both absent: the default unit). */
export function sameGroup(a: UnitGroup | undefined, b: UnitGroup | undefined): boolean {
  return a?.kind === b?.kind && a?.name === b?.name;
}

/** A unit in words, for titles, replies and logs: `staging`, `staging (group team-a)`, `staging (image shop)`. */
export function describeUnit(unit: PromotionUnit): string {
  return unit.group ? `${unit.environment} (${unit.group.kind} ${unit.group.name})` : unit.environment;
}

export const FERRY_LABEL = "ferry";

/** Labels on every Ferry PR: `ferry`, `env:<env>`, and `group:<name>` or `image:<name>` for a unit's PR. */
export function formatLabels(environment: string, group?: UnitGroup): string[] {
  return [FERRY_LABEL, `env:${environment}`, ...(group ? [`${group.kind}:${group.name}`] : [])];
}

/** The environment named by `env:<env>` among a PR's labels. */
export function parseEnvironmentLabel(labels: string[]): string | undefined {
  const label = labels.find((name) => name.startsWith("env:"));
  const environment = label?.slice("env:".length);
  return environment !== undefined && NAME.test(environment) ? environment : undefined;
}
