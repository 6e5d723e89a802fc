import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { GenerationSource } from "../../app/expand-repo-config.js";
import { UserError } from "../../core/errors.js";
import { localFileSource } from "./local-file-source.js";

/** At most this many folders are listed in a checkout for `environmentSets` (docs/config.md). */
export const MAX_LOCAL_FOLDERS = 100_000;
const MAX_DEPTH = 32;
const SKIPPED = new Set([".git", ".github", "node_modules"]);

/**
 * A local checkout as a GenerationSource (`ferry check`, `ferry plan`, `ferry diff`): its folders
 * walked without following links (a link is never a folder of the repository), bounded in count
 * and depth; its files through localFileSource, with the same refusals.
 */
export function localGenerationSource(root: string): GenerationSource {
  return {
    files: localFileSource(root),
    async folders() {
      const found: string[] = [];
      const walk = async (relative: string, depth: number): Promise<void> => {
        if (depth > MAX_DEPTH) return;
        const entries = await readdir(join(root, relative), { withFileTypes: true });
        for (const entry of entries) {
          if (!entry.isDirectory() || SKIPPED.has(entry.name)) continue;
          const path = relative === "" ? entry.name : `${relative}/${entry.name}`;
          found.push(path);
          if (found.length > MAX_LOCAL_FOLDERS)
            throw new UserError(
              "too-many-folders",
              `the checkout has more than ${MAX_LOCAL_FOLDERS} folders; environmentSets cannot list them all`,
            );
          await walk(path, depth + 1);
        }
      };
      await walk("", 0);
      return found.sort();
    },
  };
}
