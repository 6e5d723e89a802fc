/**
 * What Ferry's state keeps of change windows and freezes (docs/config.md "Change windows and
 * freezes"): the overrides given with `--override-freeze` (who, when, why, for which commit), and,
 * per environment, the window state last published as `ferry/window`, so the periodic scan
 * re-posts only when it changed.
 */

export interface WindowOverride {
  by: string;
  /** ISO time. */
  at: string;
  reason: string;
  /** The head commit of the promotion it lets through. */
  sha: string;
  pull: number;
  command: "promote" | "rollback";
}

export interface WindowState {
  /** Per environment, oldest first, at most `OVERRIDES_KEPT`. */
  overrides: Record<string, WindowOverride[]>;
  /** Per environment, the evaluator's `key` last published. */
  published: Record<string, string>;
}

export const OVERRIDES_KEPT = 20;

const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const LOGIN = /^[A-Za-z0-9-]{1,39}$/;
const SHA = /^[0-9a-f]{40}$/;
const TEXT = /^[^\p{Cc}]{1,140}$/u;
const KEY = /^[^\p{Cc}]{1,200}$/u;

export function recordOverride(
  state: WindowState | undefined,
  environment: string,
  override: WindowOverride,
) {
  const next: WindowState = state ?? { overrides: {}, published: {} };
  next.overrides[environment] = [...(next.overrides[environment] ?? []), override].slice(-OVERRIDES_KEPT);
  return next;
}

/** The override recorded for this environment and head commit, if any. */
export function overrideFor(
  state: WindowState | undefined,
  environment: string,
  sha: string,
): WindowOverride | undefined {
  return state?.overrides[environment]?.findLast((override) => override.sha === sha);
}

/** The state file's `windows` field: sorted, or nothing when empty. */
export function formatWindowState(state: WindowState | undefined): { windows?: WindowState } {
  if (!state) return {};
  const sorted = <T>(record: Record<string, T>): Record<string, T> =>
    Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  if (Object.keys(state.overrides).length === 0 && Object.keys(state.published).length === 0) return {};
  return { windows: { overrides: sorted(state.overrides), published: sorted(state.published) } };
}

/** Reads the field back, dropping whatever is malformed (anyone with write access can edit the ref). */
export function windowStateFromData(raw: unknown): WindowState | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const data = raw as { overrides?: unknown; published?: unknown };
  const state: WindowState = { overrides: {}, published: {} };
  if (typeof data.overrides === "object" && data.overrides !== null)
    for (const [environment, list] of Object.entries(data.overrides)) {
      if (!NAME.test(environment) || !Array.isArray(list)) continue;
      const valid = list.slice(-OVERRIDES_KEPT).flatMap((entry): WindowOverride[] => {
        const o = (typeof entry === "object" && entry !== null ? entry : {}) as Record<string, unknown>;
        const ok =
          typeof o.by === "string" &&
          LOGIN.test(o.by) &&
          typeof o.at === "string" &&
          !Number.isNaN(Date.parse(o.at)) &&
          typeof o.reason === "string" &&
          TEXT.test(o.reason) &&
          typeof o.sha === "string" &&
          SHA.test(o.sha) &&
          typeof o.pull === "number" &&
          Number.isSafeInteger(o.pull) &&
          (o.command === "promote" || o.command === "rollback");
        return ok ? [o as unknown as WindowOverride] : [];
      });
      if (valid.length > 0)
        state.overrides[environment] = valid.map(({ by, at, reason, sha, pull, command }) => ({
          by,
          at,
          reason,
          sha,
          pull,
          command,
        }));
    }
  if (typeof data.published === "object" && data.published !== null)
    for (const [environment, key] of Object.entries(data.published))
      if (NAME.test(environment) && typeof key === "string" && KEY.test(key))
        state.published[environment] = key;
  return state;
}
