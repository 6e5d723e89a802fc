/** How a pull request is merged, as GitHub names it (`PUT /pulls/{n}/merge` `merge_method`). */
export const MERGE_METHODS = ["squash", "merge", "rebase"] as const;
export type MergeMethod = (typeof MERGE_METHODS)[number];

/** The repository's `allow_squash_merge`, `allow_merge_commit` and `allow_rebase_merge`. */
export type AllowedMergeMethods = Record<MergeMethod, boolean>;

/**
 * The method to merge with: the configured one when the repository allows it, else the first
 * allowed of squash, merge, rebase. Unknown settings (a token that cannot read them) keep the
 * preference: GitHub's 405 then says which method is refused.
 */
export function chooseMergeMethod(
  allowed: AllowedMergeMethods | undefined,
  preferred: MergeMethod = "squash",
): MergeMethod {
  if (!allowed || allowed[preferred]) return preferred;
  return MERGE_METHODS.find((method) => allowed[method]) ?? preferred;
}
