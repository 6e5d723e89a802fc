/**
 * The rendered diff of an environment and its report: pure, no I/O. `ferry diff`, `ferry reconcile
 * --dry-run --diff` and the `ferry/diff` check run use it. docs/diff.md.
 */
export type { KubeObject } from "../kube-object.js";
export * from "./types.js";
export { diffEnvironment, identityOf, keyOf, type DiffSides } from "./environment-diff.js";
export { describeKey, IMMUTABLE_FIELDS, type ImmutableField } from "./dangers.js";
export { diffLines, unifiedDiff, type Edit } from "./line-diff.js";
export { normalizeObject } from "./normalize.js";
export { countLine, formatDiffPlain } from "./plain-report.js";
export {
  code,
  describeImageChange,
  describeSecretKeys,
  diffConclusion,
  fenced,
  formatDiffReport,
  GITHUB_CHECK_LIMITS,
  type DiffReport,
  type DiffReportLimits,
  type NamedDiff,
} from "./report.js";
