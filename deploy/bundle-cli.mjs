/**
 * `npm run build`, second step: bundles the command line (src/cli.ts) into dist/cli.js and
 * dist/chunks/, over the dist/cli.js that tsc wrote (README "Figures", start-up). Each command's
 * `import()` stays a chunk of its own, so a command loads only what it uses, in a few files instead
 * of a few hundred (zod, yaml, semver and re2js are small-file packages whose resolution
 * and compilation was most of a command's start-up). Every other package stays a runtime import
 * from node_modules, loaded only by the command that needs it (Probot, the cloud SDKs,
 * @kubernetes/client-node, Sigstore, @sigstore/tuf's seeds, the sandbox in a checkout). The rest
 * of dist/ (the package's `main`, the modules the server and reconciler are made of) is tsc's.
 */
import { build } from "esbuild";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Packages bundled in; every other bare import is left to node_modules at run time. */
const BUNDLED = new Set(["zod", "yaml", "semver", "re2js"]);

const packageOf = (specifier) =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0];

rmSync(join(ROOT, "dist", "chunks"), { recursive: true, force: true });
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
    js: 'import { createRequire as __ferryCreateRequire } from "node:module";\nconst require = __ferryCreateRequire(import.meta.url);',
  },
  allowOverwrite: true,
  logLevel: "warning",
  plugins: [
    {
      name: "external-packages",
      setup(pluginBuild) {
        pluginBuild.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith("node:")) return { path: args.path, external: true };
          return BUNDLED.has(packageOf(args.path)) ? undefined : { path: args.path, external: true };
        });
      },
    },
  ],
});
