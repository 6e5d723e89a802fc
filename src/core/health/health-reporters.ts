import type { FerryConfig } from "../config/schema.js";

/**
 * The logins whose Deployments and Deployment statuses are an environment's health (`health.reporters`
 * in docs/config.md "Environments"): what `soak`, `/promote`'s gate, the dashboard and `/ferry history`
 * read. Anyone who can write to the repository can post a Deployment status, so a status from another
 * login never counts (docs/security.md "Health"). Without the setting, the app's own login: a
 * reconciler reporting with an installation token of the app.
 */
export function healthReporters(
  config: FerryConfig,
  environment: string,
  appLogin: string | undefined,
): string[] {
  const named = config.environments[environment]?.health?.reporters;
  if (named) return named;
  return appLogin ? [appLogin] : [];
}

/** Whether `login` is one of `reporters` (GitHub logins compare without case). */
export function isReporter(reporters: readonly string[], login: string | undefined): boolean {
  if (!login) return false;
  const wanted = login.toLowerCase();
  return reporters.some((reporter) => reporter.toLowerCase() === wanted);
}
