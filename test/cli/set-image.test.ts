import { readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runFerry } from "../support/cli-io.js";
import { tempDirPerTest } from "../support/temp-tree.js";

const DIGEST = `sha256:${"d".repeat(64)}`;
const KUSTOMIZATION = "images:\n  - name: ghcr.io/acme/shop # app\n    newTag: 1.7.0\n";

const temp = tempDirPerTest("ferry-set-image-");

async function ferry(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runFerry(args, temp.dir, { now: () => new Date(0) });
}

describe("ferry set-image", () => {
  it("edits the file in place and prints FILE:LINE old -> new", async () => {
    await writeFile(join(temp.dir, "kustomization.yaml"), KUSTOMIZATION);
    const result = await ferry("set-image", "kustomization.yaml", "ghcr.io/acme/shop:1.8.0");
    expect(result).toEqual({ code: 0, stdout: "kustomization.yaml:3 1.7.0 -> 1.8.0\n", stderr: "" });
    expect(await readFile(join(temp.dir, "kustomization.yaml"), "utf8")).toBe(
      KUSTOMIZATION.replace("1.7.0", "1.8.0"),
    );
  });

  it("pins tag and digest for IMAGE:TAG@DIGEST, adding the digest key", async () => {
    await writeFile(join(temp.dir, "kustomization.yaml"), KUSTOMIZATION);
    const result = await ferry("set-image", "kustomization.yaml", `ghcr.io/acme/shop:1.8.0@${DIGEST}`);
    expect(result.stdout).toBe(
      `kustomization.yaml:3 1.7.0 -> 1.8.0\nkustomization.yaml:4 (none) -> ${DIGEST}\n`,
    );
    expect(await readFile(join(temp.dir, "kustomization.yaml"), "utf8")).toBe(
      `${KUSTOMIZATION.replace("1.7.0", "1.8.0")}    digest: ${DIGEST}\n`,
    );
  });

  it("leaves no temporary file behind", async () => {
    await writeFile(join(temp.dir, "kustomization.yaml"), KUSTOMIZATION);
    await ferry("set-image", "kustomization.yaml", "ghcr.io/acme/shop:1.8.0");
    expect(await readdir(temp.dir)).toEqual(["kustomization.yaml"]);
  });

  it("exits 3 when the image is not referenced, and writes nothing", async () => {
    await writeFile(join(temp.dir, "kustomization.yaml"), KUSTOMIZATION);
    const result = await ferry("set-image", "kustomization.yaml", "ghcr.io/acme/cart:1.8.0");
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("not referenced");
    expect(await readFile(join(temp.dir, "kustomization.yaml"), "utf8")).toBe(KUSTOMIZATION);
  });

  it.each([
    ["an injected document in the tag", "ghcr.io/acme/shop:v1\n---\nkind: ClusterRoleBinding"],
    ["a template in the tag", "ghcr.io/acme/shop:{{.Env.X}}"],
    ["a malformed digest", "ghcr.io/acme/shop@sha256:1234"],
  ])("exits 1 for %s and writes nothing", async (_what, reference) => {
    await writeFile(join(temp.dir, "kustomization.yaml"), KUSTOMIZATION);
    const result = await ferry("set-image", "kustomization.yaml", reference);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ferry set-image: invalid image reference/);
    expect(await readFile(join(temp.dir, "kustomization.yaml"), "utf8")).toBe(KUSTOMIZATION);
  });

  it("exits 1 for a file that is not valid YAML", async () => {
    await writeFile(join(temp.dir, "values.yaml"), "image: [\n");
    expect((await ferry("set-image", "values.yaml", "ghcr.io/acme/shop:1.8.0")).code).toBe(1);
  });

  it("refuses to write through a symlink", async () => {
    await writeFile(join(temp.dir, "real.yaml"), KUSTOMIZATION);
    await symlink(join(temp.dir, "real.yaml"), join(temp.dir, "kustomization.yaml"));
    const result = await ferry("set-image", "kustomization.yaml", "ghcr.io/acme/shop:1.8.0");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("symlink");
    expect(await readFile(join(temp.dir, "real.yaml"), "utf8")).toBe(KUSTOMIZATION);
  });

  it("prints its usage for --help and exits 0, as the other commands do", async () => {
    expect(await ferry("set-image", "--help")).toEqual({
      code: 0,
      stdout: expect.stringMatching(/^usage: ferry set-image /),
      stderr: "",
    });
  });

  it("exits 2 without a tag or digest, or with missing arguments", async () => {
    await writeFile(join(temp.dir, "kustomization.yaml"), KUSTOMIZATION);
    expect((await ferry("set-image", "kustomization.yaml", "ghcr.io/acme/shop")).code).toBe(2);
    expect((await ferry("set-image", "kustomization.yaml")).code).toBe(2);
  });

  it("says so and exits 0 when the file already runs the version", async () => {
    await writeFile(join(temp.dir, "kustomization.yaml"), KUSTOMIZATION);
    const result = await ferry("set-image", "kustomization.yaml", "ghcr.io/acme/shop:1.7.0");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("kustomization.yaml: already ghcr.io/acme/shop:1.7.0\n");
  });

  it("follows # ferry: markers for the image name given with --name", async () => {
    await writeFile(join(temp.dir, "values.yaml"), "shopVersion: 1.7.0 # ferry: shop\n");
    const result = await ferry("set-image", "--name", "shop", "values.yaml", "ghcr.io/acme/shop:1.8.0");
    expect(result.stdout).toBe("values.yaml:1 1.7.0 -> 1.8.0\n");
  });
});
