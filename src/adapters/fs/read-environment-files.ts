import { lstat, readdir, readFile, realpath } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { configPathProblem } from "../../core/config/schema.js";
import { UserError } from "../../core/errors.js";

/** Per-file cap: a values file beyond this is a mistake or an attack (docs/reliability.md row 29). */
export const MAX_FILE_BYTES = 8 * 1024 * 1024;
/** Caps a folder walk so that a huge tree fails loudly instead of slowly. */
export const MAX_FILES = 5_000;

const YAML_FILE = /(?:\.ya?ml|^Kustomization)$/;
const SKIPPED_DIRECTORIES = new Set([".git", ".github", "node_modules"]);

/**
 * I/O edge: collects the YAML files under an environment's `paths` in a local checkout, keyed by
 * repo-relative path with forward slashes. Resolves realpath and refuses anything outside the repo
 * root, symlinks (never read or write through a symlink), .git/ and .github/, with a UserError
 * naming the path (docs/reliability.md row 15).
 */
export async function readEnvironmentFiles(repoRoot: string, paths: string[]): Promise<Map<string, string>> {
  const root = await realpath(repoRoot);
  const files = new Map<string, string>();
  for (const path of paths) {
    const problem = configPathProblem(path);
    if (problem) throw new UserError("unsafe-path", problem);
    const segments = path.split("/").filter((segment) => segment !== "" && segment !== ".");
    let current = root;
    for (const segment of segments) {
      current = join(current, segment);
      await refuseSymlink(root, current, path);
    }
    await collect(root, current, files);
  }
  return files;
}

async function refuseSymlink(root: string, absolute: string, configured?: string): Promise<void> {
  const display = relative(root, absolute).split(sep).join("/");
  let stats;
  try {
    stats = await lstat(absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      throw new UserError("path-not-found", `path ${JSON.stringify(configured ?? display)} does not exist`);
    throw error;
  }
  if (stats.isSymbolicLink())
    throw new UserError(
      "symlink-refused",
      `path ${JSON.stringify(display)} is a symlink; Ferry never reads or writes through symlinks`,
    );
  // Belt and braces: even without a symlink on the way, the resolved path must stay inside the repo.
  const resolved = await realpath(absolute);
  if (resolved !== root && !resolved.startsWith(root + sep)) {
    throw new UserError(
      "path-outside-repo",
      `path ${JSON.stringify(display)} resolves outside the repository`,
    );
  }
}

async function collect(root: string, absolute: string, files: Map<string, string>): Promise<void> {
  const stats = await lstat(absolute);
  const display = relative(root, absolute).split(sep).join("/");
  if (stats.isSymbolicLink())
    throw new UserError(
      "symlink-refused",
      `path ${JSON.stringify(display)} is a symlink; Ferry never reads or writes through symlinks`,
    );
  if (stats.isDirectory()) {
    const entries = await readdir(absolute, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.isDirectory() && SKIPPED_DIRECTORIES.has(entry.name)) continue;
      const child = join(absolute, entry.name);
      if (entry.isSymbolicLink()) await refuseSymlink(root, child);
      if (entry.isDirectory() || YAML_FILE.test(entry.name)) await collect(root, child, files);
    }
    return;
  }
  if (!stats.isFile())
    throw new UserError("not-a-file", `path ${JSON.stringify(display)} is not a regular file`);
  if (stats.size > MAX_FILE_BYTES)
    throw new UserError(
      "file-too-large",
      `file ${JSON.stringify(display)} is larger than ${MAX_FILE_BYTES} bytes`,
    );
  if (files.size >= MAX_FILES && !files.has(display))
    throw new UserError("too-many-files", `the environment has more than ${MAX_FILES} YAML files`);
  files.set(display, await readFile(absolute, "utf8"));
}
