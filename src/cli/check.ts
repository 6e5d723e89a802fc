import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { localFileSource } from "../adapters/fs/local-file-source.js";
import { configWarnings, referenceProblems } from "../app/check-config.js";
import { configContextFromEnv } from "../core/config/config-context.js";
import { CONFIG_PATH, formatProblems, loadConfig } from "../core/config/load-config.js";
import { EXIT, UsageError, type CliIo } from "./io.js";

const USAGE = "usage: ferry check [--dir DIR]";

/**
 * `ferry check [--dir DIR]`: validates `.github/ferry.yml` and that every image is referenced in
 * each environment's paths. Problems print as `FILE:LINE:COL message`; exit 1 on any, 0 when clean.
 */
export async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { dir: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    io.stdout(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw new UsageError(USAGE);
  const root = resolve(io.cwd, values.dir ?? ".");

  let configText: string;
  try {
    configText = await readFile(resolve(root, CONFIG_PATH), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    io.stdout(`${CONFIG_PATH}:1:1 not found in ${values.dir ?? "."}\n`);
    return EXIT.invalid;
  }
  // The rules of a server started with the same environment (which GHCR, which variables).
  const loaded = loadConfig(configText, configContextFromEnv(io.env));
  if (!loaded.ok) {
    io.stdout(`${formatProblems(CONFIG_PATH, loaded.problems)}\n`);
    return EXIT.invalid;
  }

  // Warnings about the config itself (it works, but not for everything) never fail the command.
  for (const warning of configWarnings(loaded.warnings))
    io.stdout(`${warning.file}:${warning.line}:${warning.column} warning: ${warning.message}\n`);
  const problems = await referenceProblems(localFileSource(root), loaded.config, configText);
  if (problems.length > 0) {
    io.stdout(
      problems
        .map((problem) => `${problem.file}:${problem.line}:${problem.column} ${problem.message}`)
        .join("\n") + "\n",
    );
    return EXIT.invalid;
  }
  const environments = Object.keys(loaded.config.environments).length;
  const images = Object.keys(loaded.config.images).length;
  io.stdout(
    `${CONFIG_PATH}: ok (${images} image${images === 1 ? "" : "s"}, ${environments} environment${environments === 1 ? "" : "s"})\n`,
  );
  return EXIT.ok;
}
