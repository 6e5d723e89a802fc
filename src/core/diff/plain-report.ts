/**
 * Environment diffs as plain text for a terminal or a log (`ferry diff`, `ferry reconcile
 * --dry-run --diff`): per environment a count line, the dangers, the images, then each object's
 * unified diff, the way `argocd app diff` and `flux diff kustomization` print theirs. No limit of its
 * own: each object's diff is already capped (DiffLimits). docs/diff.md. Pure.
 */
import { describeKey } from "./dangers.js";
import { describeImageChange, describeSecretKeys, type NamedDiff } from "./report.js";

/** `staging: 1 changed, 0 added, 1 removed, 12 unchanged`. */
export function countLine({ environment, diff }: NamedDiff): string {
  const count = (kind: string) => diff.changes.filter((change) => change.kind === kind).length;
  return `${environment}: ${count("added")} added, ${count("changed")} changed, ${count("removed")} removed, ${diff.unchanged} unchanged`;
}

export function formatDiffPlain(
  envs: readonly NamedDiff[],
  redact: (text: string) => string = (text) => text,
): string {
  const lines: string[] = [];
  for (const env of envs) {
    const { diff } = env;
    lines.push(`=== ${countLine(env)}`);
    if (diff.dangers.length > 0) {
      const pruned = diff.dangers.filter((danger) => danger.reason === "prune").length;
      lines.push(
        `dangers${pruned > 0 ? ` (${pruned} object${pruned === 1 ? "" : "s"} would be pruned)` : ""}:`,
      );
      for (const danger of diff.dangers) lines.push(`  ${danger.reason}: ${danger.detail}`);
    }
    if (diff.images.length > 0) {
      lines.push("images:");
      for (const image of diff.images) lines.push(`  ${describeImageChange(image)}`);
    }
    for (const change of diff.changes) {
      lines.push(`[${change.kind}] ${describeKey(change.key)}`);
      const keys = describeSecretKeys(change);
      if (keys) lines.push(keys);
      if (change.note) lines.push(`(${change.note})`);
      if (change.unifiedDiff) lines.push(change.unifiedDiff);
    }
    lines.push("");
  }
  return redact(lines.join("\n"));
}
