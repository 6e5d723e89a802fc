import type { ReferenceProblem } from "../core/check/check-references.js";
import { environmentPathsPosition } from "../core/check/check-references.js";
import { soakSettings } from "../core/config/health-schema.js";
import { CONFIG_PATH } from "../core/config/load-config.js";
import type { FerryConfig } from "../core/config/schema.js";
import type { AppDeps } from "./app-deps.js";
import { environmentHealth } from "./environment-health.js";
import { errorText } from "./error-text.js";
import type { GitHubDeployments } from "./github-port.js";

/**
 * The `ferry/config` check's warning for a soak whose upstream's health source has never reported
 * (docs/config.md "Health"): such a promotion waits until it does, so the config says so before a
 * release is stuck. One read of the source per soaking environment; a source that cannot be read
 * is skipped (the check never fails on it).
 */
export async function soakHealthWarnings(
  deps: AppDeps<GitHubDeployments>,
  config: FerryConfig,
  configText: string | undefined,
  /** The config branch whose commits carry the statuses; read only when some environment soaks on health. */
  branch: string | (() => Promise<string>),
): Promise<ReferenceProblem[]> {
  const warnings: ReferenceProblem[] = [];
  let on: string | undefined = typeof branch === "string" ? branch : undefined;
  for (const [name, environment] of Object.entries(config.environments)) {
    const upstream = environment.from;
    if (soakSettings(environment.soak)?.basis !== "health" || upstream === undefined) continue;
    try {
      on ??= await (branch as () => Promise<string>)();
      const { source, health } = await environmentHealth(deps, config, upstream, on);
      if (health !== undefined) continue;
      warnings.push({
        file: CONFIG_PATH,
        ...environmentPathsPosition(configText, name),
        message: `${name} soaks on ${upstream}'s health, and no health was ever reported for ${upstream} by ${source.label}: promotions to ${name} wait until it reports (or soak: { duration: ..., basis: time })`,
      });
    } catch (error) {
      deps.log.warn({ environment: upstream, error: errorText(error, deps.secrets) }, "cannot read health");
    }
  }
  return warnings;
}
