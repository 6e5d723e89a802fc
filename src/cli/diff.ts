/**
 * `ferry diff [--dir DIR] [--env NAME]... --base REF [--head REF] [--json] [--fail-on-danger]`:
 * renders each environment of `.github/ferry.yml` at two revisions with the reconciler's renderer
 * and prints what would change, object by object (docs/diff.md "ferry diff"). Without `--head` the
 * head is the working tree of DIR, uncommitted changes included (what `git diff REF` compares
 * against). Exit 0 when something changes, 3 when nothing does, 4 with `--fail-on-danger` when a
 * change is dangerous, 1 on an error, 2 on a usage error.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { parseArgs, promisify } from "node:util";
import { exportTree, type ExportedTree } from "../adapters/git/tree-export.js";
import { REGISTRY_ENV_PREFIX } from "../core/config/config-context.js";
import { CONFIG_PATH, formatProblems } from "../core/config/load-config.js";
import type { FerryConfig } from "../core/config/schema.js";
import { diffEnvironment, formatDiffPlain, type NamedDiff } from "../core/diff/index.js";
import { UserError } from "../core/errors.js";
import { SecretRedactor } from "../core/redact.js";
import { renderPaths } from "../reconciler/render-paths.js";
import { EXIT, UsageError, type CliIo } from "./io.js";
import { loadLocalConfig } from "./load-local-config.js";

const USAGE =
  "usage: ferry diff [--dir DIR] [--env NAME]... --base REF [--head REF] [--json] [--fail-on-danger] [--allow-remote-base PREFIX]...";

/** Names of variables whose values the output must never show (the CLI's own credentials). */
const CREDENTIAL_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|PRIVATE_KEY|CREDENTIAL|API_KEY/i;

export function cliRedactor(env: NodeJS.ProcessEnv): SecretRedactor {
  const secrets = new SecretRedactor();
  for (const [name, value] of Object.entries(env))
    if (CREDENTIAL_NAME.test(name) || name.startsWith(REGISTRY_ENV_PREFIX)) secrets.add(value);
  return secrets;
}

interface Side {
  label: string;
  root: string;
  config?: FerryConfig;
  tree?: ExportedTree;
}

async function readConfig(
  root: string,
  io: CliIo,
  required: string | undefined,
): Promise<FerryConfig | undefined> {
  // Generated environments are diffed like written ones: each side expands its own config.
  const loaded = await loadLocalConfig(root, io.env);
  if (loaded === undefined) {
    if (required) throw new UserError("config-missing", `${CONFIG_PATH} not found in ${required}`);
    return undefined;
  }
  if (loaded.ok) return loaded.config;
  if (required)
    throw new UserError(
      "config-invalid",
      `${required}: ${formatProblems(CONFIG_PATH, loaded.problems).split("\n")[0]}`,
    );
  return undefined;
}

/** DIR relative to its repository's top level ("" at the top), so an exported tree is entered at the same place. */
async function prefixOf(dir: string, env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)("git", ["-C", dir, "rev-parse", "--show-prefix"], {
      timeout: 30_000,
      env: { PATH: env.PATH, HOME: env.HOME, GIT_CONFIG_NOSYSTEM: "1" },
    });
    return stdout.trim();
  } catch {
    throw new UserError("not-a-repo", `${dir} is not inside a git repository`);
  }
}

export async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      dir: { type: "string" },
      env: { type: "string", multiple: true, default: [] as string[] },
      base: { type: "string" },
      head: { type: "string" },
      json: { type: "boolean", default: false },
      "fail-on-danger": { type: "boolean", default: false },
      "allow-remote-base": { type: "string", multiple: true, default: [] as string[] },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    io.stdout(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw new UsageError(USAGE);
  if (!values.base) throw new UsageError(`--base is required\n${USAGE}`);
  if (values["allow-remote-base"].some((prefix) => prefix.trim() === ""))
    throw new UsageError(
      `--allow-remote-base needs a prefix such as https://github.com/acme/bases\n${USAGE}`,
    );
  const dir = path.resolve(io.cwd, values.dir ?? ".");
  const prefix = await prefixOf(dir, io.env);
  const sides: Side[] = [];
  try {
    const base = await exportTree(dir, values.base, io.env);
    sides.push({ label: `base ${values.base}`, root: path.join(base.dir, prefix), tree: base });
    if (values.head) {
      const head = await exportTree(dir, values.head, io.env);
      sides.push({ label: `head ${values.head}`, root: path.join(head.dir, prefix), tree: head });
    } else sides.push({ label: "the working tree", root: dir });
    const [before, after] = sides as [Side, Side];
    after.config = await readConfig(after.root, io, after.label);
    before.config = await readConfig(before.root, io, undefined);
    const known = Object.keys(after.config!.environments);
    for (const name of values.env)
      if (!known.includes(name))
        throw new UserError(
          "unknown-environment",
          `no environment ${JSON.stringify(name)} in ${CONFIG_PATH} (${known.join(", ")})`,
        );
    const names = values.env.length > 0 ? known.filter((name) => values.env.includes(name)) : known;
    const options = { env: io.env, allowRemoteBases: values["allow-remote-base"] };
    const diffs: (NamedDiff & { notRendered: string[] })[] = [];
    for (const environment of names) {
      const headPaths = after.config!.environments[environment]!.paths;
      const basePaths = before.config?.environments[environment]?.paths ?? headPaths;
      const notRendered: string[] = [];
      const render = async (side: Side, paths: readonly string[]) => {
        try {
          const rendered = await renderPaths(side.root, paths, options);
          notRendered.push(...rendered.notRendered.map((line) => `${side.label}: ${line}`));
          return rendered.objects;
        } catch (error) {
          if (error instanceof UserError)
            throw new UserError(error.code, `${environment} at ${side.label}: ${error.message}`, {
              cause: error,
            });
          throw error;
        }
      };
      const diff = diffEnvironment(await render(before, basePaths), await render(after, headPaths));
      diffs.push({ environment, diff, notRendered });
    }
    return report(diffs, values.json, values["fail-on-danger"], io);
  } finally {
    for (const side of sides) await side.tree?.remove();
  }
}

function report(
  diffs: (NamedDiff & { notRendered: string[] })[],
  json: boolean,
  failOnDanger: boolean,
  io: CliIo,
): number {
  const secrets = cliRedactor(io.env);
  for (const { environment, notRendered } of diffs)
    for (const line of notRendered)
      io.stderr(`ferry diff: ${environment}: not rendered: ${secrets.redact(line)}\n`);
  if (json) io.stdout(`${JSON.stringify(secrets.redactDeep(diffs), null, 2)}\n`);
  else io.stdout(formatDiffPlain(diffs, (text) => secrets.redact(text)));
  if (failOnDanger && diffs.some(({ diff }) => diff.dangers.length > 0)) return EXIT.danger;
  return diffs.some(({ diff }) => diff.changes.length > 0) ? EXIT.ok : EXIT.noMatch;
}
