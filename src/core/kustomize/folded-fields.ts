/**
 * Reads a parsed kustomization's fields the way kustomize does. Kustomize turns YAML into JSON and
 * decodes it with Go's encoding/json, which matches a key to a field case-insensitively (Unicode
 * simple folding, so `Resources`, `RESOURCES`, `reſources` with a long s and a Kelvin sign `K` for
 * `k` all name `resources`). Two keys that fold to the same name are refused, never resolved: which
 * one kustomize keeps is a decoder detail Ferry must not have to guess (docs/security.md). Pure.
 */
import { UserError } from "../errors.js";

/** A key as Go's case-insensitive match sees it: ASCII lower case, with the two non-ASCII folds into ASCII. */
export function foldKey(key: string): string {
  return key
    .replace(/\u017f/g, "s")
    .replace(/\u212a/g, "k")
    .replace(/[A-Z]+/g, (upper) => upper.toLowerCase());
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * A mapping's values by folded key, so `field("chartRepoUrl")` finds `ChartRepoURL`. Throws a
 * UserError naming both spellings when two keys fold to the same name.
 */
export function foldedFields(record: Record<string, unknown>, where: string): (name: string) => unknown {
  const byFolded = new Map<string, { key: string; value: unknown }>();
  for (const [key, value] of Object.entries(record)) {
    const folded = foldKey(key);
    const earlier = byFolded.get(folded);
    if (earlier)
      throw new UserError(
        "kustomization-duplicate-field",
        `${where}: ${JSON.stringify(earlier.key)} and ${JSON.stringify(key)} are the same field to kustomize; refused (keep one)`,
      );
    byFolded.set(folded, { key, value });
  }
  return (name) => byFolded.get(foldKey(name))?.value;
}
