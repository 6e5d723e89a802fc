import type { ConfigContext } from "./config-context.js";
import type { FerryConfig } from "./schema.js";
import { targetUseProblem } from "../notify/targets.js";

/**
 * The `notify:` targets a config names that this Ferry will not use for it (docs/config.md
 * "Notifications"): not configured, or bound to other installations. Warnings, in `ferry serve`
 * only (which knows its targets and the installation); the CLI sends nothing.
 */
export function notifyWarnings(
  config: FerryConfig,
  context: ConfigContext,
): { path: string[]; message: string }[] {
  const targets = context.notifyTargets;
  if (!targets) return [];
  return Object.entries(config.environments).flatMap(([environment, settings]) =>
    (settings.notify ?? []).flatMap((rule, index) => {
      const problem = targetUseProblem(targets, rule.target, context.installationOwner);
      return problem
        ? [{ path: ["environments", environment, "notify", String(index), "target"], message: problem }]
        : [];
    }),
  );
}
