import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { localGenerationSource } from "../adapters/fs/local-generation-source.js";
import { loadExpandedConfig } from "../app/expand-repo-config.js";
import { configContextFromEnv, type ConfigContext } from "../core/config/config-context.js";
import { CONFIG_PATH } from "../core/config/load-config.js";
import type { ExpandedConfigResult } from "../core/generate/validate-expansion.js";

/**
 * The CLI's config loader: `.github/ferry.yml` of a checkout, validated with the rules of a server
 * started with the same environment, its generated entries expanded over the checkout
 * (docs/config.md "Generated images and environments"). undefined when the file is absent.
 */
export async function loadLocalConfig(
  dir: string,
  env: NodeJS.ProcessEnv,
  context: ConfigContext = configContextFromEnv(env),
): Promise<(ExpandedConfigResult & { text: string }) | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, CONFIG_PATH), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return { ...(await loadExpandedConfig(text, localGenerationSource(dir), context)), text };
}
