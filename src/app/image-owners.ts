import type { FerryConfig } from "../core/config/schema.js";
import { isUserError } from "../core/errors.js";
import {
  CODEOWNERS_PATHS,
  CodeownersError,
  MAX_CODEOWNERS_BYTES,
  ownersOfAny,
  parseCodeowners,
  type Codeowners,
  type Owners,
} from "../core/rights/codeowners.js";
import { currentImageIn } from "../core/targets/index.js";
import { parseYaml } from "../core/yaml/yaml-tree.js";
import type { GitHubContents } from "./github-port.js";
import type { FileSource } from "./plan-inputs.js";
import { repoFileSource } from "./repo-files.js";

/**
 * The owners of an image in an environment, per CODEOWNERS: the owners of the environment's files
 * that reference it (docs/config.md "Who may promote what"). Everything is read from one commit's
 * tree: the default branch's for commands, a PR's head or base for the `ferry/config` check.
 */

export type CodeownersReading = { codeowners: Codeowners } | { codeowners?: undefined; problem?: string };

/**
 * The CODEOWNERS file of a tree: the first of GitHub's locations present. One at or over 3 MB is
 * not loaded, as GitHub does not load it; a link is never followed.
 */
export async function readCodeowners(github: GitHubContents, treeSha: string): Promise<CodeownersReading> {
  const files = repoFileSource(github, treeSha, MAX_CODEOWNERS_BYTES);
  for (const path of CODEOWNERS_PATHS) {
    try {
      if ((await files.listFiles([path])).includes(path))
        return { codeowners: parseCodeowners(path, await files.readFile(path)) };
    } catch (error) {
      if (error instanceof CodeownersError) return { problem: error.message };
      if (isUserError(error)) return { problem: `${path}: ${error.message}` };
      throw error;
    }
    const skipped = files.skipped?.().find((file) => file.path === path);
    if (skipped) return { problem: `${path} is over GitHub's 3 MB limit for CODEOWNERS; it is not loaded` };
  }
  return {};
}

/** Per image (of `images`), the environment's files that reference it. */
export async function imageFiles(
  files: FileSource,
  config: FerryConfig,
  environment: string,
  images: string[],
): Promise<Record<string, string[]>> {
  const result: Record<string, string[]> = Object.fromEntries(images.map((image) => [image, []]));
  const paths = config.environments[environment]?.paths ?? [];
  for (const file of await files.listFiles(paths)) {
    let parsed;
    try {
      parsed = parseYaml(await files.readFile(file));
    } catch (error) {
      if (isUserError(error)) continue; // not YAML Ferry can read: it references nothing
      throw error;
    }
    for (const image of images) {
      const entry = config.images[image];
      if (!entry) continue;
      const options = { markerName: image, fileName: file, ...(entry.helm ? { helm: entry.helm } : {}) };
      if (currentImageIn(parsed, entry.repository, options)) result[image]!.push(file);
    }
  }
  return result;
}

/** Per environment and image, the owners of the image's files there (for images whose rule asks). */
export async function ownersByEnvironment(
  github: GitHubContents,
  treeSha: string,
  config: FerryConfig,
  environments: string[],
  images: string[],
): Promise<(environment: string, image: string) => (Owners & { path?: string }) | undefined> {
  const wanted = images.filter((image) => config.images[image]?.promoters?.codeowners === true);
  if (wanted.length === 0) return () => undefined;
  const reading = await readCodeowners(github, treeSha);
  const files = repoFileSource(github, treeSha);
  const owners = new Map<string, Owners & { path?: string }>();
  for (const environment of environments) {
    const byImage = reading.codeowners ? await imageFiles(files, config, environment, wanted) : {};
    for (const image of wanted) {
      const found = reading.codeowners
        ? { ...ownersOfAny(reading.codeowners, byImage[image] ?? []), path: reading.codeowners.path }
        : { users: [], teams: [] };
      owners.set(`${environment}\u0000${image}`, found);
    }
  }
  return (environment, image) => owners.get(`${environment}\u0000${image}`);
}
