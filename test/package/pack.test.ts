/**
 * The package is the product (docs/architecture.md "The sandbox"): `npm pack` ships the compiled
 * sources, the App manifest and the published JSON Schema, and nothing of the test suite or of the
 * sandbox package (packages/sandbox: the emulators); nor does the image the Dockerfile builds.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { PINNED_SOPS } from "../../src/adapters/render/render-tools.js";
import { bundledCommands } from "../../src/cli.js";
import { imageNodeFlags, serveCommand } from "../bench/serve-command.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..");

/** What no product file may look like: tests, fixtures, harnesses, fakes, the test tree itself. */
const TEST_ONLY =
  /(^|\/)(test|tests|fixtures|__fixtures__|harness|support)\/|\.(test|spec|property|fuzz)\.[cm]?[jt]s$|(^|\/)fakes?\.[cm]?[jt]s$/;

/** What no product file may be named like: the sandbox package and its emulators and simulator. */
const SANDBOX_ONLY =
  /(^|\/)(packages|sandbox|github-emulator|story)\/|emulator|simulator|embedded-registry|push-image|ferry-app\.|@ferry\/sandbox/;

/**
 * The files `npm pack` would put in the tarball. Scripts are skipped unless asked for: with them,
 * prepack builds dist/ afresh first, as publishing does.
 */
async function packedFiles(options: { build?: boolean } = {}): Promise<string[]> {
  const args = ["pack", "--dry-run", "--json", ...(options.build ? [] : ["--ignore-scripts"])];
  const { stdout } = await run("npm", args, {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [report] = JSON.parse(stdout) as [{ files: { path: string }[] }];
  return report.files.map((file) => file.path);
}

describe("the npm package", () => {
  it("holds only the built product, the App manifest, the JSON Schema and the package's own docs", async () => {
    const files = await packedFiles();
    const outside = files.filter(
      (file) =>
        !file.startsWith("dist/") &&
        !["package.json", "README.md", "LICENSE", "app.yml", "src/core/config/ferry.schema.json"].includes(
          file,
        ),
    );
    expect(outside).toEqual([]);
    expect(files.filter((file) => TEST_ONLY.test(file))).toEqual([]);
  });

  it(
    "holds no emulator: nothing of the sandbox package, whose only trace is the command that names it",
    {
      timeout: 600_000,
    },
    async () => {
      const files = await packedFiles({ build: true });
      expect(files).toContain("dist/cli.js");
      expect(files.filter((file) => SANDBOX_ONLY.test(file))).toEqual([]);
      // dist/cli/sandbox.js loads the package by name where a checkout has it; the tarball holds no other.
      expect(files.filter((file) => /sandbox/.test(file) && file !== "dist/cli/sandbox.js")).toEqual([]);
    },
  );

  it(
    "runs each short command from its bundle in the built dist/ through a private code cache, its errors still one line",
    { timeout: 600_000 },
    async () => {
      // dist/ as the test above built it (built here when this test runs alone).
      if (!existsSync(join(ROOT, "dist", "commands"))) await run("npm", ["run", "build"], { cwd: ROOT });
      const cli = join(ROOT, "dist", "cli.js");
      // The list from src/cli.ts's own table, not from the build script's reading of its text.
      const bundled = bundledCommands();
      expect(bundled).toEqual(expect.arrayContaining(["select", "set-image", "check", "plan"]));
      expect(readdirSync(join(ROOT, "dist", "commands")).sort()).toEqual(
        bundled.map((name) => `${name}.cjs`).sort(),
      );
      const dir = mkdtempSync(join(tmpdir(), "ferry-bundled-"));
      try {
        writeFileSync(join(dir, "tags.txt"), "1.0.0\n1.2.0\n2.0.0\n");
        writeFileSync(join(dir, "policy.yml"), 'range: "^1.0.0"\n');
        const env = { ...process.env, NODE_COMPILE_CACHE: join(dir, "cache") };
        const ferry = (args: string[]) =>
          run(process.execPath, [cli, ...args], { cwd: dir, env }).then(
            ({ stdout }) => ({ code: 0, out: stdout }),
            (error: { code: number; stdout: string; stderr: string }) => ({
              code: error.code,
              out: error.stdout + error.stderr,
            }),
          );
        const select = ["select", "--policy", "policy.yml", "--tags", "tags.txt"];
        expect(await ferry(select)).toEqual({ code: 0, out: "1.2.0\n" });
        const cached = readdirSync(join(dir, "cache", "ferry"));
        expect(cached).toEqual([expect.stringMatching(/^select-v.*\.bin$/)]);
        expect(await ferry(select)).toEqual({ code: 0, out: "1.2.0\n" });
        expect(readdirSync(join(dir, "cache", "ferry"))).toEqual(cached);
        // A usage error and a user error, thrown by the bundle's own classes, still map to exit 2 and 1.
        expect(await ferry(["select", "--bogus"])).toEqual({
          code: 2,
          out: expect.stringMatching(/^ferry select: Unknown option '--bogus'[^\n]*\n$/),
        });
        writeFileSync(join(dir, "bad.yml"), 'range: "^^1"\n');
        expect(await ferry(["select", "--policy", "bad.yml", "--tags", "tags.txt"])).toEqual({
          code: 1,
          out: 'ferry select: policy.range: invalid semver range: improper constraint: "^^1"\n',
        });
        expect(await ferry(["plan", "--dir", "nowhere"])).toEqual({
          code: 1,
          out: `ferry plan: no .github/ferry.yml in ${join(dir, "nowhere")}\n`,
        });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it("depends at run time on neither tsx nor the sandbox package (the bin and the image run dist/)", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Record<
      string,
      Record<string, string> | undefined
    >;
    for (const field of ["dependencies", "optionalDependencies", "peerDependencies", "bundleDependencies"]) {
      const names = Object.keys(manifest[field] ?? {});
      expect(
        names.filter((name) => name === "tsx" || name.startsWith("@ferry/")),
        field,
      ).toEqual([]);
    }
    expect(manifest.workspaces).toEqual(["packages/sandbox"]);
  });

  it("builds dist/ from src/ alone, so no test file or test-only fake can be compiled into it", async () => {
    const { stdout } = await run("npx", ["tsc", "-p", "tsconfig.build.json", "--showConfig"], { cwd: ROOT });
    const config = JSON.parse(stdout) as {
      files: string[];
      compilerOptions: { rootDir: string; outDir: string };
    };
    expect(config.files.length).toBeGreaterThan(0);
    expect(config.files.filter((file) => !file.startsWith("./src/"))).toEqual([]);
    expect(config.files.filter((file) => TEST_ONLY.test(file))).toEqual([]);
    expect(config.compilerOptions).toMatchObject({ rootDir: "./src", outDir: "./dist" });
  });

  it("points bin and main at files the build writes", async () => {
    const { readFile } = await import("node:fs/promises");
    const manifest = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as {
      bin: Record<string, string>;
      main: string;
    };
    const built = (file: string) => file.replace(/^dist\//, "src/").replace(/\.js$/, ".ts");
    const { existsSync } = await import("node:fs");
    for (const target of [...Object.values(manifest.bin), manifest.main]) {
      expect(target).toMatch(/^dist\/[a-z0-9/-]+\.js$/);
      expect(existsSync(join(ROOT, built(target))), `${target} is built from ${built(target)}`).toBe(true);
    }
  });
});

describe("the image", () => {
  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  /** The sources of every COPY or ADD from the build context (not from another stage). */
  const copied = dockerfile
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => /^(COPY|ADD)\s/i.test(line) && !/\s--from=/i.test(line))
    .flatMap((line) => {
      const words = line
        .split(/\s+/)
        .slice(1)
        .filter((word) => !word.startsWith("--"));
      return words.slice(0, -1);
    });

  it("ships sops, built from its Go module at the release the reconciler pins", () => {
    expect(dockerfile).toContain(`ARG SOPS_VERSION=${PINNED_SOPS}`);
    expect(dockerfile).toMatch(/go install "github\.com\/getsops\/sops\/v3\/cmd\/sops@\$\{SOPS_VERSION\}"/);
    expect(dockerfile).toMatch(/^COPY --from=sops \/out\/sops \/usr\/local\/bin\/sops$/m);
  });

  it("runs node with V8's young generation capped and in memory saver mode, and the bench runs `ferry serve` with the same flags", () => {
    const flags = imageNodeFlags(dockerfile);
    expect(flags).toContain("--max-semi-space-size=16");
    expect(flags).toContain("--memory-saver-mode");
    expect(serveCommand().args.slice(0, flags.length)).toEqual(flags);
    expect(() => imageNodeFlags('ENTRYPOINT ["/usr/bin/tini", "--", "ferry"]\n')).toThrow(
      /does not run node \/app\/dist\/cli\.js/,
    );
    expect(() => imageNodeFlags("ENTRYPOINT node /app/dist/cli.js\n")).toThrow(/no ENTRYPOINT in JSON form/);
  });

  it("finds what the Dockerfile copies from the build context", () => {
    expect(copied).toContain("src");
    expect(copied).toContain("package.json");
  });

  it("copies no sandbox: neither packages/ nor the whole context, and the context leaves packages/ out", () => {
    expect(copied.filter((source) => /^(\.\/?|\*|packages(\/.*)?|.*sandbox.*)$/.test(source))).toEqual([]);
    const ignored = readFileSync(join(ROOT, ".dockerignore"), "utf8")
      .split("\n")
      .map((line) => line.trim());
    expect(ignored).toContain("packages");
  });

  it("copies no emulator inside what it does copy (src/ holds only the command that names the package)", () => {
    const walk = (path: string): string[] =>
      statSync(path).isDirectory() ? readdirSync(path).flatMap((name) => walk(join(path, name))) : [path];
    const files = copied
      .filter((source) => existsSync(join(ROOT, source)))
      .flatMap((source) => walk(join(ROOT, source)))
      .map((path) => path.slice(ROOT.length + 1));
    expect(files).toContain("src/cli.ts");
    expect(files.filter((file) => SANDBOX_ONLY.test(file))).toEqual([]);
  });
});
