/**
 * The package is the product (docs/architecture.md "The sandbox"): `npm pack` ships the compiled
 * sources, the App manifest and the published JSON Schema, and nothing of the test suite.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "..", "..");

/** What no product file may look like: tests, fixtures, harnesses, fakes, the test tree itself. */
const TEST_ONLY =
  /(^|\/)(test|tests|fixtures|__fixtures__|harness|support)\/|\.(test|spec|property|fuzz)\.[cm]?[jt]s$|(^|\/)fakes?\.[cm]?[jt]s$/;

/** The files `npm pack` would put in the tarball. Scripts are skipped: the build is not this test's job. */
async function packedFiles(): Promise<string[]> {
  const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [report] = JSON.parse(stdout) as [{ files: { path: string }[] }];
  return report.files.map((file) => file.path);
}

describe("the npm package", { timeout: 60_000 }, () => {
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
