/**
 * Whether `login` is one of `reporters` (GitHub logins compare without case): the identities whose
 * Deployments, Deployment statuses and commit statuses are an environment's health (`health` in
 * docs/config.md "Health", resolved by `healthSourceOf`). Anyone who can write to the repository
 * can post a status, so a status from another login never counts (docs/security.md "Health").
 */
export function isReporter(reporters: readonly string[], login: string | undefined): boolean {
  if (!login) return false;
  const wanted = login.toLowerCase();
  return reporters.some((reporter) => reporter.toLowerCase() === wanted);
}
