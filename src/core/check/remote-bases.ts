/**
 * The reconciler refuses kustomize remote resources unless `ferry reconcile --allow-remote-base`
 * allows them (content outside Git, fetched from inside the cluster on every cycle: see
 * docs/security.md). The config check says so early: one warning per remote reference, on the
 * environment's `paths` line. Pure.
 */
import { CONFIG_PATH } from "../config/load-config.js";
import type { FerryConfig } from "../config/schema.js";
import { isKustomizationFile, remoteReferencesIn } from "../kustomize/kustomization-references.js";
import { environmentPathsPosition, type ReferenceProblem } from "./check-references.js";

export function checkRemoteBases(
  config: FerryConfig,
  filesByEnvironment: Map<string, Map<string, string>>,
  configText?: string,
): ReferenceProblem[] {
  const problems: ReferenceProblem[] = [];
  for (const environment of Object.keys(config.environments)) {
    const files = filesByEnvironment.get(environment);
    if (!files) continue;
    for (const [file, text] of files) {
      if (!isKustomizationFile(file)) continue;
      for (const reference of remoteReferencesIn(text)) {
        problems.push({
          file: CONFIG_PATH,
          ...environmentPathsPosition(configText, environment),
          message: `environment ${environment}: ${file} loads the remote ${reference.field} entry ${JSON.stringify(reference.value)}; ferry reconcile refuses remote resources unless allowed with --allow-remote-base`,
        });
      }
    }
  }
  return problems;
}
