import { NAME_PATTERN } from "../config/names.js";
import { isValidDigest, isValidTag } from "../image-ref.js";
import type { UnitGroup } from "../pr/branch.js";
import { formatWindowState, windowStateFromData, type WindowState } from "./window-state.js";

/**
 * Ferry's state, the only data it keeps of its own: holds, floors and the history of deployed
 * versions per environment. It lives as a JSON file on the state ref (`formatStateFile` /
 * `parseStateFile`), updated by compare-and-swap; the dashboard issue only shows it.
 */
export interface Hold {
  by: string;
  /** ISO time. */
  at: string;
  reason: "hold" | "rollback";
}

export interface FerryState {
  version: 1;
  /** Holds of a whole environment: every unit of it (`/hold <env>` on a PR of the default unit, or elsewhere). */
  holds: Record<string, Hold>;
  /**
   * Holds of one unit of an environment (docs/config.md "Grouping"): environment → `group:<name>`
   * or `image:<name>` → hold. Absent in state files from before groups, which read unchanged.
   */
  unitHolds?: Record<string, Record<string, Hold>>;
  /**
   * Per environment and image, the tag that automatic updates must stay above: the last tag a Ferry
   * PR brought in (so a human revert is not undone by the next scan) or the tag a rollback left.
   */
  floors: Record<string, Record<string, string>>;
  /**
   * Per environment and image, the versions Ferry's merged PRs deployed, oldest first; a merged
   * rollback removes the version it rolled back from. `/rollback` goes to the entry before the
   * one running now.
   */
  history: Record<string, Record<string, DeployedVersion[]>>;
  /**
   * The dashboard issue's number, so it is found with one read whatever the number of
   * `ferry`-labelled issues and PRs; checked on every read (an open issue Ferry wrote, titled as
   * the dashboard), since anyone with write access can edit the ref.
   */
  dashboard?: number;
  /** Change-window overrides and what `ferry/window` last said (window-state.ts). */
  windows?: WindowState;
}

export interface DeployedVersion {
  tag?: string;
  digest?: string;
}

/** Versions kept per environment and image (the state file stays small). */
export const HISTORY_LIMIT = 20;

export function emptyState(): FerryState {
  return { version: 1, holds: {}, floors: {}, history: {} };
}

/** The same deployed version: by digest when both have one, else by tag. */
export function sameVersion(a: DeployedVersion, b: DeployedVersion): boolean {
  if (a.digest !== undefined && b.digest !== undefined) return a.digest === b.digest;
  return a.tag !== undefined && a.tag === b.tag;
}

/**
 * Records a merged Ferry PR's change of one image in the history: a promotion appends `to` (after
 * `from`, when the history does not end there: a first record or a change made by hand); a
 * rollback drops `from`, the version rolled back from, so that the next rollback goes further back.
 */
export function recordDeployment(
  state: FerryState,
  environment: string,
  image: string,
  change: { from: DeployedVersion; to: DeployedVersion; rollback: boolean },
): void {
  const versions = [...(state.history[environment]?.[image] ?? [])];
  const known = (version: DeployedVersion): boolean =>
    version.tag !== undefined || version.digest !== undefined;
  if (change.rollback) {
    if (versions.length > 0 && sameVersion(versions.at(-1)!, change.from)) versions.pop();
    if (versions.length === 0 || !sameVersion(versions.at(-1)!, change.to)) versions.push(change.to);
  } else {
    if (known(change.from) && (versions.length === 0 || !sameVersion(versions.at(-1)!, change.from)))
      versions.push(change.from);
    versions.push(change.to);
  }
  (state.history[environment] ??= {})[image] = versions.slice(-HISTORY_LIMIT).map((version) => ({
    ...(version.tag !== undefined ? { tag: version.tag } : {}),
    ...(version.digest !== undefined ? { digest: version.digest } : {}),
  }));
}

/**
 * The version before `current` in an environment's history of one image: the entry below the
 * newest one equal to `current`. Undefined when `current` is the oldest recorded, or not recorded.
 */
export function versionBefore(
  state: FerryState,
  environment: string,
  image: string,
  current: DeployedVersion,
): DeployedVersion | undefined {
  const versions = state.history[environment]?.[image] ?? [];
  for (let index = versions.length - 1; index > 0; index--)
    if (sameVersion(versions[index]!, current)) return versions[index - 1];
  return undefined;
}

const NAME = NAME_PATTERN;
const LOGIN = /^[A-Za-z0-9-]{1,39}(?:\[bot\])?$/;

/** Reads the state file back; text that is not JSON is an empty state, like a missing block. */
export function parseStateFile(text: string | undefined): FerryState {
  if (text === undefined) return emptyState();
  try {
    return stateFromData(JSON.parse(text));
  } catch {
    return emptyState();
  }
}

/**
 * The state file: stable JSON (sorted keys, one trailing newline), so the same state is always
 * the same bytes and an update that changes nothing can be recognised and skipped.
 */
export function formatStateFile(state: FerryState): string {
  const sorted = <T>(record: Record<string, T>): Record<string, T> =>
    Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const floors = Object.fromEntries(
    Object.entries(sorted(state.floors)).map(([environment, images]) => [environment, sorted(images)]),
  );
  const holds = Object.fromEntries(
    Object.entries(sorted(state.holds)).map(([environment, { by, at, reason }]) => [
      environment,
      { by, at, reason },
    ]),
  );
  const history = Object.fromEntries(
    Object.entries(sorted(state.history)).map(([environment, images]) => [environment, sorted(images)]),
  );
  const dashboard = state.dashboard !== undefined ? { dashboard: state.dashboard } : {};
  // Written only when a unit is held: a state without unit holds is the same bytes as before groups.
  const units = Object.entries(sorted(state.unitHolds ?? {}))
    .filter(([, keys]) => Object.keys(keys).length > 0)
    .map(([environment, keys]) => [
      environment,
      Object.fromEntries(
        Object.entries(sorted(keys)).map(([key, { by, at, reason }]) => [key, { by, at, reason }]),
      ),
    ]);
  const unitHolds = units.length > 0 ? { unitHolds: Object.fromEntries(units) } : {};
  const windows = formatWindowState(state.windows);
  return `${JSON.stringify({ version: 1, holds, ...unitHolds, floors, history, ...dashboard, ...windows }, null, 2)}\n`;
}

/** A unit's key in `unitHolds`: `group:<name>` or `image:<name>`. */
export function unitKey(group: UnitGroup): string {
  return `${group.kind}:${group.name}`;
}

/** Whether automatic updates of the unit stop: its environment is held, or the unit itself. */
export function unitHold(state: FerryState, environment: string, group?: UnitGroup): Hold | undefined {
  return state.holds[environment] ?? (group ? state.unitHolds?.[environment]?.[unitKey(group)] : undefined);
}

/** Holds or releases one unit (the whole environment when `group` is absent). */
export function setUnitHold(
  state: FerryState,
  environment: string,
  group: UnitGroup | undefined,
  hold: Hold | undefined,
): void {
  if (!group) {
    if (hold) state.holds[environment] ??= hold;
    else delete state.holds[environment];
    return;
  }
  const key = unitKey(group);
  if (hold) ((state.unitHolds ??= {})[environment] ??= {})[key] ??= hold;
  else if (state.unitHolds?.[environment]) {
    delete state.unitHolds[environment][key];
    if (Object.keys(state.unitHolds[environment]).length === 0) delete state.unitHolds[environment];
  }
}

const UNIT_KEY = /^(?:group|image):[a-z0-9][a-z0-9_-]{0,62}$/;

function parseHold(hold: unknown): Hold | undefined {
  if (typeof hold !== "object" || hold === null) return undefined;
  const { by, at, reason } = hold as Record<string, unknown>;
  if (typeof by !== "string" || !LOGIN.test(by) || typeof at !== "string" || Number.isNaN(Date.parse(at)))
    return undefined;
  if (reason !== "hold" && reason !== "rollback") return undefined;
  return { by, at, reason };
}

/** Anything malformed is dropped field by field (a body or the file can be edited by hand). */
export function stateFromData(raw: unknown): FerryState {
  const data = raw as Record<string, unknown> | undefined;
  const state = emptyState();
  if (typeof data !== "object" || data === null || data.version !== 1) return state;
  const holds = data.holds as Record<string, unknown> | undefined;
  if (typeof holds === "object" && holds !== null) {
    for (const [environment, hold] of Object.entries(holds)) {
      const parsed = NAME.test(environment) ? parseHold(hold) : undefined;
      if (parsed) state.holds[environment] = parsed;
    }
  }
  const unitHolds = data.unitHolds as Record<string, unknown> | undefined;
  if (typeof unitHolds === "object" && unitHolds !== null) {
    for (const [environment, units] of Object.entries(unitHolds)) {
      if (!NAME.test(environment) || typeof units !== "object" || units === null) continue;
      for (const [key, hold] of Object.entries(units as Record<string, unknown>)) {
        const parsed = UNIT_KEY.test(key) ? parseHold(hold) : undefined;
        if (parsed) ((state.unitHolds ??= {})[environment] ??= {})[key] = parsed;
      }
    }
  }
  const floors = data.floors as Record<string, unknown> | undefined;
  if (typeof floors === "object" && floors !== null) {
    for (const [environment, images] of Object.entries(floors)) {
      if (!NAME.test(environment) || typeof images !== "object" || images === null) continue;
      for (const [image, tag] of Object.entries(images as Record<string, unknown>)) {
        if (NAME.test(image) && typeof tag === "string" && isValidTag(tag))
          (state.floors[environment] ??= {})[image] = tag;
      }
    }
  }
  const history = data.history as Record<string, unknown> | undefined;
  if (typeof history === "object" && history !== null) {
    for (const [environment, images] of Object.entries(history)) {
      if (!NAME.test(environment) || typeof images !== "object" || images === null) continue;
      for (const [image, versions] of Object.entries(images as Record<string, unknown>)) {
        if (!NAME.test(image) || !Array.isArray(versions)) continue;
        const valid = versions.slice(-HISTORY_LIMIT).flatMap((raw): DeployedVersion[] => {
          const { tag, digest } = (typeof raw === "object" && raw !== null ? raw : {}) as Record<
            string,
            unknown
          >;
          const version: DeployedVersion = {};
          if (typeof tag === "string" && isValidTag(tag)) version.tag = tag;
          if (typeof digest === "string" && isValidDigest(digest)) version.digest = digest;
          return version.tag !== undefined || version.digest !== undefined ? [version] : [];
        });
        if (valid.length > 0) (state.history[environment] ??= {})[image] = valid;
      }
    }
  }
  if (typeof data.dashboard === "number" && Number.isSafeInteger(data.dashboard) && data.dashboard > 0)
    state.dashboard = data.dashboard;
  const windows = windowStateFromData(data.windows);
  if (windows) state.windows = windows;
  return state;
}
