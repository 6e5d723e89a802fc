/**
 * A commit as people read it: its first 7 hex digits, as git and GitHub show one. Every message,
 * comment, PR body and status line uses this one form; links keep the full SHA.
 */
export function shortSha(sha: string): string {
  return sha.slice(0, 7);
}
