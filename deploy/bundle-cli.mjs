/**
 * `npm run build`, second step: bundles the command line (src/cli.ts) over the dist/cli.js that tsc
 * wrote (README "Figures", start-up; docs/capacity.md "Start-up"):
 *
 * - each short command (`bundled` in src/cli.ts) becomes one CommonJS file, dist/commands/<name>.cjs,
 *   which dist/cli.js runs through a code cache written after its first run
 *   (src/cli/command-bundle.ts); a script, since only a script's cache can be taken after it ran;
 * - dist/cli.js itself and the other commands (the servers, trust-root, sandbox) are ESM, each
 *   command's `import()` a chunk of its own in dist/chunks/.
 *
 * Either way a command loads only what it uses, in a few files instead of a few hundred (zod, yaml,
 * semver and re2js are small-file packages whose resolution and compilation was most of a command's
 * start-up). Every other package stays a run-time import from node_modules, loaded only by the
 * command that needs it (Probot, the cloud SDKs, @kubernetes/client-node, Sigstore, @sigstore/tuf's
 * seeds, the sandbox in a checkout). The rest of dist/ (the package's `main`, the modules the
 * server and reconciler are made of) is tsc's.
 */
import { build } from "esbuild";
import { readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Packages bundled in; every other bare import is left to node_modules at run time. */
const BUNDLED = new Set(["zod", "yaml", "semver", "re2js"]);

const packageOf = (specifier) =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0];

/** The commands src/cli.ts marks `bundled`: each its own CommonJS file. */
const cliSource = readFileSync(join(ROOT, "src", "cli.ts"), "utf8");
const BUNDLED_COMMANDS = [...cliSource.matchAll(/import\("\.\/cli\/([a-z-]+)\.js"\),\s*bundled: true/g)].map(
  (match) => match[1],
);
if (BUNDLED_COMMANDS.length === 0) throw new Error("bundle-cli: src/cli.ts marks no command `bundled`");

/** Leaves every bare import but the bundled packages to node_modules. */
const externalPackages = {
  name: "external-packages",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:")) return { path: args.path, external: true };
      return BUNDLED.has(packageOf(args.path)) ? undefined : { path: args.path, external: true };
    });
  },
};

for (const dir of ["chunks", "commands"]) rmSync(join(ROOT, "dist", dir), { recursive: true, force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: { cli: "src/cli.ts" },
  outdir: "dist",
  chunkNames: "chunks/[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node22",
  // The bundled CommonJS packages (yaml, semver) call require() for Node's modules.
  banner: {
    js: 'const require = process.getBuiltinModule("node:module").createRequire(import.meta.url);',
  },
  allowOverwrite: true,
  logLevel: "warning",
  plugins: [
    externalPackages,
    {
      // A bundled command's import() in cli.js is left to tsc's dist/cli/<name>.js: it runs only
      // where dist/commands/<name>.cjs is missing.
      name: "bundled-commands-apart",
      setup(pluginBuild) {
        pluginBuild.onResolve({ filter: /^\.\/cli\/[a-z-]+\.js$/ }, (args) =>
          args.importer.endsWith(join("src", "cli.ts")) && BUNDLED_COMMANDS.includes(args.path.slice(6, -3))
            ? { path: args.path, external: true }
            : undefined,
        );
      },
    },
  ],
});

// Each bundled command: its `run` and the error mapping its errors meet (src/cli/run-command.ts),
// after src/cli/parse-once.ts (zod without its JIT), which must come before any schema is built.
await build({
  absWorkingDir: ROOT,
  entryPoints: Object.fromEntries(BUNDLED_COMMANDS.map((name) => [name, `ferry-command:${name}`])),
  outdir: join("dist", "commands"),
  outExtension: { ".js": ".cjs" },
  // Less to read and hash on every run; names are kept (error classes name themselves).
  minifyWhitespace: true,
  minifySyntax: true,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node22",
  // A CommonJS file has no import.meta: its URL is the bundle's own, as dist/chunks/ gives it.
  banner: { js: 'var __ferryImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  define: { "import.meta.url": "__ferryImportMetaUrl" },
  logLevel: "warning",
  plugins: [
    {
      name: "command-entries",
      setup(pluginBuild) {
        pluginBuild.onResolve({ filter: /^ferry-command:/ }, (args) => ({
          path: args.path.slice("ferry-command:".length),
          namespace: "ferry-command",
        }));
        pluginBuild.onLoad({ filter: /.*/, namespace: "ferry-command" }, (args) => ({
          contents: [
            `import "./src/cli/parse-once.ts";`,
            `export { run } from "./src/cli/${args.path}.ts";`,
            `export { runCommand } from "./src/cli/run-command.ts";`,
          ].join("\n"),
          resolveDir: ROOT,
          loader: "ts",
        }));
      },
    },
    externalPackages,
  ],
});
