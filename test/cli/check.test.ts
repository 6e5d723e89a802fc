import { symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readEnvironmentFiles } from "../../src/adapters/fs/read-environment-files.js";
import { UserError } from "../../src/core/errors.js";
import { runFerry } from "../support/cli-io.js";
import { tempDirPerTest } from "../support/temp-tree.js";

const CONFIG = `images:
  shop:
    repository: ghcr.io/acme/shop
environments:
  staging:
    paths: [overlays/staging]
  prod:
    paths:
      - overlays/prod
    from: staging
`;
const OVERLAY = "images:\n- name: ghcr.io/acme/shop\n  newTag: 1.8.0\n";

const temp = tempDirPerTest("ferry-check-");
const { put } = temp;

async function ferry(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runFerry(args, temp.dir, { now: () => new Date(0) });
}

describe("ferry check", () => {
  it("exits 0 when the config is valid and every environment references every image", async () => {
    await put(".github/ferry.yml", CONFIG);
    await put("overlays/staging/kustomization.yaml", OVERLAY);
    await put("overlays/prod/kustomization.yaml", OVERLAY);
    const result = await ferry("check", "--dir", ".");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("ok");
  });

  it("refuses an ignore glob RE2 cannot express, at its line and column", async () => {
    await put(
      ".github/ferry.yml",
      CONFIG.replace(
        "repository: ghcr.io/acme/shop\n",
        'repository: ghcr.io/acme/shop\n    policy: { ignore: ["!(1.*)"] }\n',
      ),
    );
    await put("overlays/staging/kustomization.yaml", OVERLAY);
    await put("overlays/prod/kustomization.yaml", OVERLAY);
    const result = await ferry("check", "--dir", ".");
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /ferry\.yml:4:\d+ .*invalid glob "!\(1\.\*\)": a negated extglob !\(…\) cannot be matched by RE2/,
    );
  });

  it("warns that auth: github reads only public GHCR packages, and still exits 0", async () => {
    await put(".github/ferry.yml", `${CONFIG}registries:\n  ghcr.io: { auth: github }\n`);
    await put("overlays/staging/kustomization.yaml", OVERLAY);
    await put("overlays/prod/kustomization.yaml", OVERLAY);
    const result = await ferry("check", "--dir", ".");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      ".github/ferry.yml:12:14 warning: auth: github works only for public packages",
    );
  });

  it('warns on a soak whose upstream names no health source (docs/config.md "Health"), and still exits 0', async () => {
    await put(".github/ferry.yml", `${CONFIG}    soak: 2h\n`);
    await put("overlays/staging/kustomization.yaml", OVERLAY);
    await put("overlays/prod/kustomization.yaml", OVERLAY);
    const result = await ferry("check", "--dir", ".");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /\.github\/ferry\.yml:11:5 warning: soak waits for staging's health, and staging names no health source/,
    );
    await put(
      ".github/ferry.yml",
      CONFIG.replace(
        "    paths: [overlays/staging]\n",
        "    paths: [overlays/staging]\n    health: { source: ferry }\n",
      ) + "    soak: 2h\n",
    );
    expect((await ferry("check", "--dir", ".")).stdout).not.toMatch(/warning/);
  });

  it("fails on a config that sends the installation token elsewhere or reads a variable outside the allowlist", async () => {
    await put(
      ".github/ferry.yml",
      `${CONFIG}registries:\n  registry.example.com: { auth: github }\n  harbor.example.com: { username: u, passwordEnv: DATABASE_URL }\n`,
    );
    await put("overlays/staging/kustomization.yaml", OVERLAY);
    await put("overlays/prod/kustomization.yaml", OVERLAY);
    const result = await ferry("check", "--dir", ".");
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/ferry\.yml:12:\d+ auth: github sends the GitHub App installation token/);
    expect(result.stdout).toMatch(/ferry\.yml:13:\d+ passwordEnv DATABASE_URL is not readable by configs/);
  });

  it("fails on the exact line of a plaintext Secret and of a secretGenerator reading a plaintext file, and passes SOPS, SealedSecret and ExternalSecret", async () => {
    await put(".github/ferry.yml", CONFIG);
    await put(
      "overlays/staging/kustomization.yaml",
      `${OVERLAY}resources: [secret.yaml, sealed.yaml, external.yaml, sops.yaml]\nsecretGenerator:\n  - name: db\n    envs:\n      - db.env\n  - name: api\n    files:\n      - token=api.enc.env\n`,
    );
    await put(
      "overlays/staging/secret.yaml",
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: shop-db\ndata:\n  password: aHVudGVyMg==\n",
    );
    await put(
      "overlays/staging/sealed.yaml",
      "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: s\nspec:\n  encryptedData:\n    password: AgBy3i\n",
    );
    await put(
      "overlays/staging/external.yaml",
      "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata:\n  name: e\nspec:\n  data:\n    - secretKey: password\n",
    );
    await put(
      "overlays/staging/sops.yaml",
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: enc\ndata:\n  password: ENC[AES256_GCM,data:abc,type:str]\nsops:\n  mac: ENC[AES256_GCM,data:x]\n  version: 3.8.1\n",
    );
    await put("overlays/staging/db.env", "PASSWORD=hunter2\n");
    await put(
      "overlays/staging/api.enc.env",
      "TOKEN=ENC[AES256_GCM,data:x]\nsops_mac=ENC[AES256_GCM,data:y]\n",
    );
    await put("overlays/prod/kustomization.yaml", OVERLAY);
    const result = await ferry("check", "--dir", ".");
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toEqual([
      "overlays/staging/kustomization.yaml:8:9 secretGenerator db makes a plaintext Secret from overlays/staging/db.env, a plaintext file in Git; use a SealedSecret (Bitnami Sealed Secrets), a SOPS-encrypted file, or an ExternalSecret (External Secrets Operator)",
      "overlays/staging/secret.yaml:10:1 plaintext Secret shop-db (data) in Git: anyone who can read the repository can read it; use a SealedSecret (Bitnami Sealed Secrets), a SOPS-encrypted file, or an ExternalSecret (External Secrets Operator)",
    ]);
  });

  it("points at the environment's paths line when an image is not referenced", async () => {
    await put(".github/ferry.yml", CONFIG);
    await put("overlays/staging/kustomization.yaml", OVERLAY);
    await put("overlays/prod/kustomization.yaml", "images:\n- name: ghcr.io/acme/cart\n  newTag: 1.0.0\n");
    const result = await ferry("check");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      ".github/ferry.yml:9:7 image shop (ghcr.io/acme/shop) is not referenced in environment prod's paths (overlays/prod)\n",
    );
  });

  it("prints config problems as FILE:LINE:COL message", async () => {
    await put(".github/ferry.yml", CONFIG.replace("from: staging", "from: qa"));
    const result = await ferry("check");
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^\.github\/ferry\.yml:10:\d+ .*qa/);
  });

  it("reports a broken YAML file in an environment at its position", async () => {
    await put(".github/ferry.yml", CONFIG);
    await put("overlays/staging/kustomization.yaml", OVERLAY);
    await put("overlays/prod/kustomization.yaml", OVERLAY);
    await put("overlays/prod/broken.yaml", "a: [\n");
    const result = await ferry("check");
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^overlays\/prod\/broken\.yaml:\d+:\d+ invalid YAML/);
  });

  it("reports an environment path that is a symlink instead of following it", async () => {
    await put(".github/ferry.yml", CONFIG);
    await put("overlays/staging/kustomization.yaml", OVERLAY);
    await symlink(join(temp.dir, "overlays/staging"), join(temp.dir, "overlays/prod"));
    const result = await ferry("check");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      '.github/ferry.yml:9:7 environment prod: path "overlays/prod" is a symlink; Ferry never reads or writes through symlinks\n',
    );
  });

  it("exits 1 when there is no config", async () => {
    expect((await ferry("check")).code).toBe(1);
  });
});

describe("readEnvironmentFiles", () => {
  it("collects the YAML files under folders and named files, keyed by repo path", async () => {
    await put("apps/shop/kustomization.yaml", OVERLAY);
    await put("apps/shop/deploy/deployment.yml", "kind: Deployment\n");
    await put("apps/shop/README.md", "# no\n");
    await put("values/prod.yaml", "image: {}\n");
    const files = await readEnvironmentFiles(temp.dir, ["apps/shop", "values/prod.yaml"]);
    expect([...files.keys()]).toEqual([
      "apps/shop/deploy/deployment.yml",
      "apps/shop/kustomization.yaml",
      "values/prod.yaml",
    ]);
    expect(files.get("apps/shop/kustomization.yaml")).toBe(OVERLAY);
  });

  it.each([
    ["../../.github/workflows/x.yml"],
    ["/etc/passwd"],
    ["%2e%2e/x.yaml"],
    [".github/workflows"],
    [".git/config"],
    ["apps\0/x.yaml"],
  ])("refuses the configured path %j", async (path) => {
    await expect(readEnvironmentFiles(temp.dir, [path])).rejects.toThrow(UserError);
  });

  it("refuses a symlinked file inside a folder, naming it", async () => {
    await put("apps/shop/kustomization.yaml", OVERLAY);
    await symlink("/etc/passwd", join(temp.dir, "apps/shop/passwd.yaml"));
    await expect(readEnvironmentFiles(temp.dir, ["apps/shop"])).rejects.toThrow(
      /apps\/shop\/passwd\.yaml.*symlink/,
    );
  });

  it("refuses a symlinked folder on the way to a path", async () => {
    await put("real/values.yaml", "a: 1\n");
    await symlink(join(temp.dir, "real"), join(temp.dir, "linked"));
    await expect(readEnvironmentFiles(temp.dir, ["linked/values.yaml"])).rejects.toThrow(
      /"linked" is a symlink/,
    );
  });

  it("names a path that does not exist", async () => {
    await expect(readEnvironmentFiles(temp.dir, ["overlays/none"])).rejects.toThrow(
      /overlays\/none.*does not exist/,
    );
  });
});

describe("ferry check output order", () => {
  it("lists problems by file and line, whether they come from unreadable paths or missing references", async () => {
    await put(
      ".github/ferry.yml",
      `images:\n  shop:\n    repository: ghcr.io/acme/shop\nenvironments:\n  staging:\n    paths: [overlays/staging]\n  prod:\n    paths: [overlays/prod]\n`,
    );
    await put("overlays/staging/kustomization.yaml", "images:\n- name: ghcr.io/acme/cart\n  newTag: 1.0.0\n");
    const result = await ferry("check");
    expect(result.code).toBe(1);
    expect(
      result.stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(" ")[0]),
    ).toEqual([".github/ferry.yml:6:12", ".github/ferry.yml:8:12"]);
  });
});

describe("ferry check --help", () => {
  it("prints its usage and exits 0, as the other commands do", async () => {
    expect(await ferry("check", "--help")).toEqual({
      code: 0,
      stdout: "usage: ferry check [--dir DIR] [--offline]\n",
      stderr: "",
    });
  });
});
