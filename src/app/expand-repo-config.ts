import type { ConfigContext } from "../core/config/config-context.js";
import { loadConfig, locateProblems, type ConfigProblem } from "../core/config/load-config.js";
import type { FerryConfig } from "../core/config/schema.js";
import { isUserError } from "../core/errors.js";
import { discoverImages } from "../core/generate/discover-images.js";
import { discoveryPaths, expandConfig, generatesConfig } from "../core/generate/expand-config.js";
import { compileSegmentPattern } from "../core/generate/segment-pattern.js";
import { validateExpansion, type ExpandedConfigResult } from "../core/generate/validate-expansion.js";
import { discoveryCache, type DiscoveryCache } from "./discovery-cache.js";
import type { FileSource } from "./plan-inputs.js";

/** At most this many environment files are read to find images for `imageRules` (docs/config.md). */
export const MAX_DISCOVERY_FILES = 5000;

/** What the expansion of generated config reads from a commit (or a checkout). */
export interface GenerationSource {
  /** Every folder of the tree, repository-relative (read only when the config has environmentSets). */
  folders(): Promise<string[]>;
  files: FileSource;
  /** A file's content address, when known: what it references is then cached by it. */
  blobSha?(path: string): Promise<string | undefined>;
  /** Names the repository in cache keys. */
  cacheScope?: string;
}

/**
 * A loaded (written) config with its `imageRules` and `environmentSets` expanded into ordinary
 * entries (docs/config.md "Generated images and environments"): the I/O half of
 * src/core/generate, called by every loader before anything else reads the config. A config that
 * generates nothing comes back as it was.
 */
export async function expandLoadedConfig(
  text: string,
  loaded: { config: FerryConfig; warnings: ConfigProblem[] },
  source: GenerationSource,
  context?: ConfigContext,
  cache: DiscoveryCache = discoveryCache,
): Promise<ExpandedConfigResult> {
  const written = loaded.config;
  if (!generatesConfig(written))
    return { ok: true, config: written, warnings: loaded.warnings, generated: [], shadowed: [] };
  const refused = (path: string[], message: string): ExpandedConfigResult => ({
    ok: false,
    problems: locateProblems(text, [{ path, message }]),
  });
  let folders: string[] = [];
  if ((written.environmentSets ?? []).length > 0) {
    try {
      folders = await source.folders();
    } catch (error) {
      if (!isUserError(error)) throw error;
      return refused(["environmentSets"], `environmentSets: ${error.message}`);
    }
  }
  const files: string[] = [];
  for (const path of discoveryPaths(written, folders)) {
    try {
      files.push(...(await source.files.listFiles([path])));
    } catch (error) {
      // A path that cannot be read is the planner's to report, for its environment alone.
      if (!isUserError(error)) throw error;
    }
  }
  const unique = [...new Set(files)].sort();
  if (unique.length > MAX_DISCOVERY_FILES)
    return refused(
      ["imageRules"],
      `imageRules would read ${unique.length} files under the environments' paths, over the ${MAX_DISCOVERY_FILES} limit: narrow the paths`,
    );
  const rules = (written.imageRules ?? []).map((rule) => compileSegmentPattern(rule.match));
  const wanted = (name: string): boolean => rules.some((rule) => rule.match(name) !== undefined);
  const rulesKey = (written.imageRules ?? []).map((rule) => rule.match).join("\n");
  const references: { path: string; images: readonly string[] }[] = [];
  for (const path of unique) {
    const sha = await source.blobSha?.(path);
    const key =
      sha === undefined ? undefined : `${source.cacheScope ?? ""}\0${sha}\0${basename(path)}\0${rulesKey}`;
    let images = key === undefined ? undefined : cache.get(key);
    if (images === undefined) {
      let text: string;
      try {
        text = await source.files.readFile(path);
      } catch (error) {
        if (!isUserError(error)) throw error;
        continue;
      }
      images = discoverImages(text, path, wanted);
      if (key !== undefined) cache.set(key, images);
    }
    references.push({ path, images });
  }
  const expanded = validateExpansion(text, expandConfig(written, { folders, references }), context);
  if (!expanded.ok) return expanded;
  const warnings = [...loaded.warnings];
  for (const warning of expanded.warnings)
    if (!warnings.some((known) => known.line === warning.line && known.message === warning.message))
      warnings.push(warning);
  return { ...expanded, warnings };
}

/** A config text loaded and its generated entries expanded over `source`: what every loader returns. */
export async function loadExpandedConfig(
  text: string,
  source: GenerationSource,
  context?: ConfigContext,
): Promise<ExpandedConfigResult> {
  const written = loadConfig(text, context);
  return written.ok ? expandLoadedConfig(text, written, source, context) : written;
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
