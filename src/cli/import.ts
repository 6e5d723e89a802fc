import { lstat, readdir, readFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { UserError } from "../core/errors.js";
import { importPeerConfig, renderImport, type InputFile, type Peer } from "../core/import/import-config.js";
import { EXIT, UsageError, type CliIo } from "./io.js";

const USAGE = "usage: ferry import [--from argocd|flux] FILE...|DIR";

/** Each file as big as a config may be, and not more of them than a config repository holds. */
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_FILES = 2000;

/**
 * `ferry import [--from argocd|flux] FILE...|DIR`: reads Argo CD Image Updater's or Flux's image
 * automation objects from YAML files (a directory is walked for *.yaml and *.yml, symlinks and
 * .git skipped) and prints an equivalent `.github/ferry.yml`, a `# ferry import:` line per thing
 * that has no equivalent. Exit 1 with one line on unreadable input (docs/config.md "ferry import").
 */
export async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { from: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    io.stdout(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length === 0) throw new UsageError(USAGE);
  if (values.from !== undefined && values.from !== "argocd" && values.from !== "flux")
    throw new UsageError(`--from must be argocd or flux\n${USAGE}`);
  const files: InputFile[] = [];
  const skipped: string[] = [];
  for (const argument of positionals)
    files.push(...(await readInput(resolve(io.cwd, argument), argument, skipped)));
  const result = importPeerConfig(files, values.from as Peer | undefined);
  const lines = skipped.map(
    (file) => `# ferry import: skipped ${file}, larger than ${MAX_FILE_BYTES} bytes\n`,
  );
  io.stdout(`${lines.join("")}${renderImport(result)}`);
  return EXIT.ok;
}

/** A file named on the command line must be readable; in a directory, one too large is skipped and said. */
async function readInput(path: string, shown: string, skipped: string[]): Promise<InputFile[]> {
  const stats = await lstat(path).catch(() => undefined);
  if (!stats) throw new UserError("file-not-found", `${shown} does not exist`);
  if (stats.isFile()) return [{ file: shown, text: await readBounded(path, shown) }];
  if (!stats.isDirectory()) throw new UserError("not-a-file", `${shown} is not a file or directory`);
  const files: InputFile[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== ".git" && entry.name !== "node_modules") await walk(full);
      else if (entry.isFile() && /\.ya?ml$/.test(entry.name)) {
        if (files.length >= MAX_FILES)
          throw new UserError("too-many-files", `${shown} holds more than ${MAX_FILES} YAML files`);
        // Relative to the directory: the config repository's root, as update paths are.
        const file = relative(path, full).split("\\").join("/");
        if ((await lstat(full)).size > MAX_FILE_BYTES) skipped.push(join(shown, file));
        else files.push({ file, text: await readBounded(full, join(shown, file)) });
      }
    }
  };
  await walk(path);
  return files;
}

async function readBounded(path: string, shown: string): Promise<string> {
  const stats = await lstat(path);
  if (stats.size > MAX_FILE_BYTES)
    throw new UserError("file-too-large", `${shown} is larger than ${MAX_FILE_BYTES} bytes`);
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new UserError(
      "file-unreadable",
      `${shown}: ${(error as NodeJS.ErrnoException).code ?? "unreadable"}`,
    );
  }
}
