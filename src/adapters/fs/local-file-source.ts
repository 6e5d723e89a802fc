import type { FileSource } from "../../app/plan-inputs.js";
import { UserError } from "../../core/errors.js";
import { readEnvironmentFiles } from "./read-environment-files.js";

/**
 * A local checkout as a FileSource (`ferry plan`, `ferry check`): files read once per environment
 * path set, symlinks and escapes refused by readEnvironmentFiles.
 */
export function localFileSource(dir: string): FileSource {
  const cache = new Map<string, string>();
  return {
    async listFiles(paths) {
      const files = await readEnvironmentFiles(dir, paths);
      for (const [path, text] of files) cache.set(path, text);
      return [...files.keys()];
    },
    async readFile(path) {
      const text = cache.get(path);
      if (text === undefined)
        throw new UserError("file-not-listed", `${path} is not under an environment path`);
      return text;
    },
  };
}
