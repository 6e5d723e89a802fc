import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/core/config/load-config.js";
import { runFerry } from "../support/cli-io.js";
import { tempDirPerTest } from "../support/temp-tree.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/import/", import.meta.url));
const temp = tempDirPerTest("ferry-import-");

async function ferry(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runFerry(args, temp.dir, { now: () => new Date(0) });
}

const FLUX = `apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageRepository
metadata: { name: app, namespace: flux-system }
spec: { image: ghcr.io/acme/app }
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata: { name: app, namespace: flux-system }
spec:
  imageRepositoryRef: { name: app }
  policy: { semver: { range: ^1.0.0 } }
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageUpdateAutomation
metadata: { name: prod, namespace: flux-system }
spec: { update: { path: ./clusters/prod } }
`;

describe("ferry import", () => {
  it("prints the golden ferry.yml for a directory, its files named relative to it", async () => {
    const dir = join(FIXTURES, "flux-environments-by-marker", "input");
    const result = await ferry("import", dir);
    expect(result).toEqual({
      code: 0,
      stdout: await readFile(join(FIXTURES, "flux-environments-by-marker", "expected.ferry.yml"), "utf8"),
      stderr: "",
    });
  });

  it("reads several files, multi-document, and prints YAML Ferry's loader accepts", async () => {
    await writeFile(join(temp.dir, "a.yaml"), FLUX.split("---\n").slice(0, 2).join("---\n"));
    await writeFile(join(temp.dir, "b.yml"), FLUX.split("---\n")[2]!);
    const result = await ferry("import", "a.yaml", "b.yml");
    expect(result.code).toBe(0);
    const loaded = loadConfig(result.stdout);
    expect(loaded.ok && loaded.config.environments.prod?.paths).toEqual(["clusters/prod"]);
    expect(loaded.ok && loaded.config.images.app?.policy).toEqual({ range: "^1.0.0" });
  });

  it("skips symlinks and .git when it walks a directory", async () => {
    await mkdir(join(temp.dir, "repo", ".git"), { recursive: true });
    await writeFile(join(temp.dir, "repo", "flux.yaml"), FLUX);
    await writeFile(join(temp.dir, "outside.yaml"), "{ not: [yaml");
    await writeFile(join(temp.dir, "repo", ".git", "broken.yaml"), "{ not: [yaml");
    await symlink(join(temp.dir, "outside.yaml"), join(temp.dir, "repo", "link.yaml"));
    const result = await ferry("import", "repo");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("repository: ghcr.io/acme/app");
  });

  it("skips a directory's file larger than 1 MiB (a CRD bundle, say) and says so on the first line", async () => {
    await mkdir(join(temp.dir, "repo"));
    await writeFile(join(temp.dir, "repo", "flux.yaml"), FLUX);
    await writeFile(join(temp.dir, "repo", "install.yaml"), `# ${"x".repeat(1024 * 1024)}\n`);
    const result = await ferry("import", "repo");
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")[0]).toBe(
      "# ferry import: skipped repo/install.yaml, larger than 1048576 bytes",
    );
    expect(loadConfig(result.stdout).ok).toBe(true);
  });

  it("with --from flux reads only the Flux objects of a mixed input", async () => {
    const argo = await readFile(
      join(FIXTURES, "argocd-annotations-migration", "input", "applications.yaml"),
      "utf8",
    );
    await writeFile(join(temp.dir, "all.yaml"), `${argo}---\n${FLUX}`);
    const flux = await ferry("import", "--from", "flux", "all.yaml");
    expect(flux.code).toBe(0);
    expect(flux.stdout).toContain("ghcr.io/acme/app");
    expect(flux.stdout).not.toContain("nginx");
    const guessed = await ferry("import", "all.yaml");
    expect(guessed.stdout).toContain("# ferry import: the input holds both Argo CD and Flux objects");
    expect(guessed.stdout).not.toContain("ghcr.io/acme/app");
  });

  it.each([
    ["a file that does not exist", "missing.yaml", "", /^ferry import: missing\.yaml does not exist\n$/],
    ["invalid YAML", "bad.yaml", "kind: [Application\n", /^ferry import: bad\.yaml: invalid YAML: .+\n$/],
    [
      "an alias bomb",
      "bomb.yaml",
      `a: &a [x, x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 120 }, (_, i) => `k${i}: *a`).join("\n")}\n`,
      /^ferry import: bomb\.yaml: invalid YAML: .+\n$/,
    ],
    [
      "YAML without any peer object",
      "plain.yaml",
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: web }\n",
      /^ferry import: no Argo CD Application or ImageUpdater, and no Flux ImageRepository, ImagePolicy or ImageUpdateAutomation in the input\n$/,
    ],
    [
      "a file larger than 1 MiB",
      "big.yaml",
      `# ${"x".repeat(1024 * 1024)}\n`,
      /^ferry import: big\.yaml is larger than 1048576 bytes\n$/,
    ],
  ])("exits 1 with one line on %s", async (_, file, text, message) => {
    if (text !== "") await writeFile(join(temp.dir, file), text);
    const result = await ferry("import", file);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(message);
  });

  it("exits 1 when --from names a peer the input does not hold", async () => {
    await writeFile(join(temp.dir, "flux.yaml"), FLUX);
    const result = await ferry("import", "--from", "argocd", "flux.yaml");
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr: "ferry import: no Argo CD Application or ImageUpdater in the input\n",
    });
  });

  it("exits 2 with the usage line without input or with an unknown --from", async () => {
    expect(await ferry("import")).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("usage: ferry import"),
    });
    expect(await ferry("import", "--from", "kargo", "x.yaml")).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--from must be argocd or flux"),
    });
  });
});
