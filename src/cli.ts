#!/usr/bin/env node
/**
 * `ferry` — the command line. Each command lives in `src/cli/<command>.ts` and exports
 * `run(args, io)`; this file only dispatches and turns errors into one-line messages and the
 * documented exit codes (never a stack trace for bad input).
 */
import { codeCacheOf, loadCommandBundle } from "./cli/command-bundle.js";
import { EXIT, type CliIo, type CommandRun } from "./cli/io.js";
import { runCommand } from "./cli/run-command.js";

// Node's modules taken without their ESM face (docs/capacity.md "Start-up").
const { existsSync, realpathSync } = process.getBuiltinModule("node:fs") as typeof import("node:fs");
const nodeModule = process.getBuiltinModule("node:module") as typeof import("node:module");
const { fileURLToPath } = process.getBuiltinModule("node:url") as typeof import("node:url");

/**
 * `bundled`: a short command, which dist/ runs from its own bundle through a code cache
 * (src/cli/command-bundle.ts); the servers (serve, reconcile) and the rarer commands load their
 * modules as they are.
 */
const COMMANDS: Record<
  string,
  { summary: string; load: () => Promise<{ run: CommandRun }>; bundled?: true }
> = {
  select: {
    summary: "print the tag a policy chooses from a tag list",
    load: () => import("./cli/select.js"),
    bundled: true,
  },
  "set-image": {
    summary: "edit every reference to an image in a file",
    load: () => import("./cli/set-image.js"),
    bundled: true,
  },
  check: {
    summary: "validate .github/ferry.yml and the image references it expects",
    load: () => import("./cli/check.js"),
    bundled: true,
  },
  diff: {
    summary: "render each environment at two revisions and print what would change",
    load: () => import("./cli/diff.js"),
    bundled: true,
  },
  plan: {
    summary: "query the registries and print what would change",
    load: () => import("./cli/plan.js"),
    bundled: true,
  },
  history: {
    summary: "which tag and digest ran in an environment over time, from git history",
    load: () => import("./cli/history.js"),
    bundled: true,
  },
  import: {
    summary: "print a ferry.yml equivalent to Argo CD Image Updater's or Flux's config",
    load: () => import("./cli/import.js"),
    bundled: true,
  },
  reconcile: { summary: "run the in-cluster reconciler", load: () => import("./cli/reconcile.js") },
  serve: { summary: "run the GitHub App server (same as npm start)", load: () => import("./cli/serve.js") },
  "trust-root": {
    summary: "refresh the Sigstore trusted root through TUF into a file",
    load: () => import("./cli/trust-root.js"),
  },
  sandbox: { summary: "run the whole story on embedded parts", load: () => import("./cli/sandbox.js") },
};

const USAGE = `usage: ferry <command> [options]\n\ncommands:\n${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(10)} ${command.summary}`)
  .join("\n")}\n`;

/** The commands dist/ runs from a bundle of their own (deploy/bundle-cli.mjs builds one for each). */
export function bundledCommands(): string[] {
  return Object.entries(COMMANDS)
    .filter(([, command]) => command.bundled)
    .map(([name]) => name);
}

export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    (name === undefined ? io.stderr : io.stdout)(USAGE);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr(`ferry: unknown command ${JSON.stringify(name)}\n${USAGE}`);
    return EXIT.usage;
  }
  const bundleFile = command.bundled
    ? fileURLToPath(new URL(`./commands/${name}.cjs`, import.meta.url))
    : undefined;
  if (bundleFile !== undefined && existsSync(bundleFile)) {
    let bundle;
    try {
      bundle = loadCommandBundle(bundleFile, codeCacheOf(io.env, process.getuid?.())).bundle;
    } catch (error) {
      io.stderr(`ferry ${name}: internal error: ${(error as Error).message}\n`);
      return EXIT.invalid;
    }
    return bundle.runCommand(name, async () => bundle, args, io);
  }
  return runCommand(name, command.load, args, io);
}

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
    cwd: process.cwd(),
    env: process.env,
    now: () => new Date(),
  };
}

function isEntryPoint(): boolean {
  if (process.argv[1] === undefined) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  // Node's on-disk cache of compiled code (Node ≥ 22.1; in the OS temporary directory, or
  // NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off): a command's chunks, loaded
  // below, compile once per version rather than on every run. Where the directory cannot be
  // written, Node runs without it.
  (nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
  main(process.argv.slice(2), processIo()).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`ferry: ${(error as Error).message}\n`);
      process.exitCode = EXIT.invalid;
    },
  );
}
