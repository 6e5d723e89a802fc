import { soakSettings } from "./health-schema.js";
import type { FerryConfig } from "./schema.js";

/**
 * A `soak` that counts health whose upstream names no health source (docs/config.md "Health"): it
 * waits for Ferry's own reconciler, and where Argo CD or Flux applies the upstream, that never
 * reports, so the promotion waits for good. A warning, not an error: the bundled reconciler does
 * report; `health: { source: ferry }` on the upstream says so and silences it.
 */
export function soakWarnings(config: FerryConfig): { path: string[]; message: string }[] {
  const warnings: { path: string[]; message: string }[] = [];
  for (const [name, environment] of Object.entries(config.environments)) {
    const soak = soakSettings(environment.soak);
    const upstream = environment.from;
    if (soak?.basis !== "health" || upstream === undefined) continue;
    if (config.environments[upstream]?.health !== undefined) continue;
    warnings.push({
      path: ["environments", name, "soak"],
      message: `soak waits for ${upstream}'s health, and ${upstream} names no health source: only Ferry's reconciler's Deployment statuses count; name the engine that applies ${upstream} (health: { source: argocd | flux | ferry, ... }) or soak on time alone (soak: { duration: ${soak.duration}, basis: time })`,
    });
  }
  return warnings;
}
