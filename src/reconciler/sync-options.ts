/**
 * Per-object sync annotations, in Argo CD's spelling and Ferry's (docs/architecture.md "Sync waves and
 * opt-outs"): the sync wave, `Prune=false`, `PrunePropagationPolicy=…`, `IgnoreExtraneous`, and hooks
 * (not supported: such objects are set aside). Option lists are parsed as Argo CD parses them:
 * comma-separated, each item trimmed, empty items dropped, items compared exactly. Pure.
 */
import type { KubeObject } from "./types.js";

export const ARGO_SYNC_WAVE = "argocd.argoproj.io/sync-wave";
export const FERRY_SYNC_WAVE = "ferry.dev/sync-wave";
export const ARGO_SYNC_OPTIONS = "argocd.argoproj.io/sync-options";
export const FERRY_SYNC_OPTIONS = "ferry.dev/sync-options";
export const ARGO_COMPARE_OPTIONS = "argocd.argoproj.io/compare-options";
export const FERRY_COMPARE_OPTIONS = "ferry.dev/compare-options";
export const HOOK_ANNOTATIONS = ["argocd.argoproj.io/hook", "helm.sh/hook"] as const;

export type PropagationPolicy = "Foreground" | "Background" | "Orphan";

const POLICIES: Record<string, PropagationPolicy> = {
  foreground: "Foreground",
  background: "Background",
  orphan: "Orphan",
};

type Annotated = Pick<KubeObject, "metadata">;

function annotationsOf(object: Annotated): Record<string, string> {
  return object.metadata.annotations ?? {};
}

/** The items of a comma-separated option annotation, trimmed, empty ones dropped (Argo CD's GetAnnotationCSVs). */
export function optionItems(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .slice(0, 4096)
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

function options(object: Annotated, keys: readonly string[]): string[] {
  const annotations = annotationsOf(object);
  return keys.flatMap((key) => optionItems(annotations[key]));
}

/** `Prune=false` in the Argo CD or Ferry sync options. */
export function pruneDisabledByOption(object: Annotated): boolean {
  return options(object, [ARGO_SYNC_OPTIONS, FERRY_SYNC_OPTIONS]).includes("Prune=false");
}

/** `IgnoreExtraneous` in the Argo CD or Ferry compare options. */
export function ignoresExtraneous(object: Annotated): boolean {
  return options(object, [ARGO_COMPARE_OPTIONS, FERRY_COMPARE_OPTIONS]).includes("IgnoreExtraneous");
}

/**
 * The object's `PrunePropagationPolicy=` (the Ferry annotation wins over Argo CD's), `fallback`
 * without one; throws a one-line Error for a value that is not foreground, background or orphan.
 */
export function propagationPolicyOf(object: Annotated, fallback: PropagationPolicy): PropagationPolicy {
  for (const key of [FERRY_SYNC_OPTIONS, ARGO_SYNC_OPTIONS]) {
    const item = optionItems(annotationsOf(object)[key]).find((option) =>
      option.startsWith("PrunePropagationPolicy="),
    );
    if (item === undefined) continue;
    const value = item.slice("PrunePropagationPolicy=".length);
    const policy = POLICIES[value];
    if (!policy)
      throw new Error(
        `${key}: PrunePropagationPolicy=${value.slice(0, 40)} is not foreground, background or orphan`,
      );
    return policy;
  }
  return fallback;
}

/** `--prune-propagation` / FERRY_RECONCILE_PRUNE_PROPAGATION: foreground, background or orphan. */
export function parsePropagationPolicy(value: string): PropagationPolicy | undefined {
  return POLICIES[value];
}

/** strconv.Atoi's syntax (Argo CD parses waves with it), bounded to a 32-bit integer. */
const WAVE = /^[+-]?[0-9]{1,10}$/;

/**
 * The object's sync wave: `ferry.dev/sync-wave` if set, else `argocd.argoproj.io/sync-wave`, else
 * 0; `{ error }` (one line) for a value that is not an integer.
 */
export function syncWaveOf(object: Annotated): { wave: number } | { error: string } {
  const annotations = annotationsOf(object);
  for (const key of [FERRY_SYNC_WAVE, ARGO_SYNC_WAVE]) {
    const text = annotations[key];
    if (text === undefined) continue;
    const wave = WAVE.test(text) ? Number(text) : NaN;
    if (!Number.isSafeInteger(wave) || Math.abs(wave) > 2 ** 31 - 1)
      return { error: `${key} "${text.slice(0, 40)}" is not an integer` };
    return { wave };
  }
  return { wave: 0 };
}

/** The wave, 0 for an invalid one (for live objects, whose waves only order the prune). */
export function waveOrZero(object: Annotated | undefined): number {
  if (!object) return 0;
  const parsed = syncWaveOf(object);
  return "wave" in parsed ? parsed.wave : 0;
}

/** The hook annotation that makes the object a hook (`helm.sh/hook: pre-install`), or undefined. */
export function hookOf(object: Annotated): string | undefined {
  const annotations = annotationsOf(object);
  const key = HOOK_ANNOTATIONS.find((name) => annotations[name] !== undefined);
  return key ? `${key}: ${annotations[key]!.slice(0, 60)}` : undefined;
}
