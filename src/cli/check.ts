import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { localFileSource } from "../adapters/fs/local-file-source.js";
import type { RegistryClientOptions } from "../adapters/registry/index.js";
import { configWarnings, referenceProblems } from "../app/check-config.js";
import { registryKeyPosition } from "../core/check/check-references.js";
import { CONFIG_PATH, formatProblems } from "../core/config/load-config.js";
import { formatGenerated } from "../core/generate/format-generated.js";
import { SecretRedactor } from "../core/redact.js";
import { EXIT, UsageError, type CliIo } from "./io.js";
import { loadLocalConfig } from "./load-local-config.js";

const USAGE = "usage: ferry check [--dir DIR] [--offline]";

/**
 * `ferry check [--dir DIR] [--offline]`: validates `.github/ferry.yml`, that every image is
 * referenced in each environment's paths, and (unless --offline) that each registry of
 * `registries:` accepts the credentials this environment derives for it, with one bounded read.
 * Problems print as `FILE:LINE:COL message`; exit 1 on any, 0 when clean.
 */
export async function run(args: string[], io: CliIo): Promise<number> {
  return runCheck(args, io);
}

/** `registryOverrides`: tests only, the loopback endpoints of the providers' fakes. */
export async function runCheck(
  args: string[],
  io: CliIo,
  registryOverrides: Partial<RegistryClientOptions> = {},
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      dir: { type: "string" },
      offline: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    io.stdout(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw new UsageError(USAGE);
  const root = resolve(io.cwd, values.dir ?? ".");

  // The rules of a server started with the same environment (which GHCR, which variables).
  const loaded = await loadLocalConfig(root, io.env);
  if (loaded === undefined) {
    io.stdout(`${CONFIG_PATH}:1:1 not found in ${values.dir ?? "."}\n`);
    return EXIT.invalid;
  }
  const configText = loaded.text;
  if (!loaded.ok) {
    io.stdout(`${formatProblems(CONFIG_PATH, loaded.problems)}\n`);
    return EXIT.invalid;
  }

  // Warnings about the config itself (it works, but not for everything) never fail the command.
  for (const warning of configWarnings(loaded.warnings))
    io.stdout(`${warning.file}:${warning.line}:${warning.column} warning: ${warning.message}\n`);
  const problems = await referenceProblems(
    localFileSource(root),
    loaded.config,
    configText,
    loaded.generated,
  );
  if (problems.length > 0) {
    io.stdout(
      problems
        .map((problem) => `${problem.file}:${problem.line}:${problem.column} ${problem.message}`)
        .join("\n") + "\n",
    );
    return EXIT.invalid;
  }
  let probed = 0;
  if (!values.offline && loaded.config.registries) {
    // Loaded only here: --offline (or a config without registries:) never loads the registry client.
    const { cliRegistryClient, probeRegistries, PROBE_LIMITS } = await import("./registry-access.js");
    const secrets = new SecretRedactor();
    const client = cliRegistryClient(loaded.config, io.env, {
      secrets,
      limits: PROBE_LIMITS,
      ...registryOverrides,
    });
    const failed: string[] = [];
    for (const result of await probeRegistries(client, loaded.config)) {
      if ("skipped" in result) continue;
      probed += 1;
      if (result.ok) continue;
      const { line, column } = registryKeyPosition(configText, result.key);
      // The errors name the provider and identity, never a credential; redacted all the same.
      failed.push(`${CONFIG_PATH}:${line}:${column} ${secrets.redact(result.problem)}`);
    }
    if (failed.length > 0) {
      io.stdout(`${failed.join("\n")}\n`);
      return EXIT.invalid;
    }
  }
  for (const line of formatGenerated(loaded.generated, loaded.shadowed)) io.stdout(`${line}\n`);
  const environments = Object.keys(loaded.config.environments).length;
  const images = Object.keys(loaded.config.images).length;
  io.stdout(
    `${CONFIG_PATH}: ok (${images} image${images === 1 ? "" : "s"}, ${environments} environment${environments === 1 ? "" : "s"}${probed > 0 ? `, ${probed} registr${probed === 1 ? "y" : "ies"} read with their credentials` : ""})\n`,
  );
  return EXIT.ok;
}
