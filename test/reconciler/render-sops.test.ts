/**
 * SOPS decrypted at render time by the real sops with real age keys (src/reconciler/sops-decrypt.ts):
 * an encrypted Secret manifest, an encrypted env file a secretGenerator reads, the one-line errors
 * for a missing key, a wrong key and a corrupted file, no plaintext left on disk, and a sops child
 * that sees none of the reconciler's environment.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { findExecutable, MISSING_SOPS_HELP } from "../../src/adapters/render/render-tools.js";
import { renderPath } from "../../src/reconciler/render-folder.js";
import { confine } from "../../src/reconciler/confinement.js";
import { makeAgeKey, sopsEncrypt, type AgeKey } from "../support/sops-keys.js";

const PASSWORD = "correct-horse-battery-staple-7731";
const TOKEN = "tok_live_5f2a9c0e81";
const SECRET_YAML =
  "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\nstringData:\n  password: " +
  PASSWORD +
  "\n  user: shop\n";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}
function repo(files: Record<string, string>): string {
  const root = tempDir("ferry-sops-repo-");
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}
/** Every file's text under `dir`, for "no plaintext here" checks. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(path.join(entry.parentPath, entry.name), "utf8"))
    .join("\n");
}

let key: AgeKey;
let otherKey: AgeKey;
let keys: string;
beforeAll(() => {
  keys = mkdtempSync(path.join(tmpdir(), "ferry-sops-keys-"));
  key = makeAgeKey(keys, "right.agekey");
  otherKey = makeAgeKey(keys, "wrong.agekey");
});
afterAll(() => rmSync(keys, { recursive: true, force: true }));

function withRefs(objects: Awaited<ReturnType<typeof renderPath>>) {
  return objects.map((rendered) => ({
    ...rendered,
    ref: {
      group: "",
      version: "v1",
      kind: rendered.object.kind,
      namespace: "shop",
      name: rendered.object.metadata.name,
    },
  }));
}

/** A private TMPDIR per render, so what the render leaves there can be looked at. */
function renderEnv(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: tempDir("ferry-sops-home-"), TMPDIR: tempDir("ferry-sops-tmp-") };
}

describe("SOPS decryption at render time", () => {
  it("applies an encrypted Secret manifest decrypted, and leaves the checkout and the temp dir without plaintext", async () => {
    const encrypted = sopsEncrypt(SECRET_YAML, "yaml", key.recipient);
    expect(encrypted).not.toContain(PASSWORD);
    const root = repo({
      "prod/secret.yaml": encrypted,
      "prod/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    });
    const env = renderEnv();
    const objects = await renderPath(root, "prod", { env, sops: { ageKeyFile: key.file } });
    const secret = objects.find((rendered) => rendered.object.kind === "Secret")!;
    expect(secret.object).toMatchObject({ stringData: { password: PASSWORD, user: "shop" } });
    expect(secret.object).not.toHaveProperty("sops");
    expect(secret.decrypted).toBe(true);
    expect(objects.find((rendered) => rendered.object.kind === "ConfigMap")!.decrypted).toBeUndefined();
    // The shared checkout still holds the ciphertext, byte for byte; the private copy is gone.
    expect(readFileSync(path.join(root, "prod/secret.yaml"), "utf8")).toBe(encrypted);
    expect(allText(root)).not.toContain(PASSWORD);
    expect(readdirSync(env.TMPDIR!)).toEqual([]);
    // The decrypted Secret is not refused as "plaintext from Git"; the same Secret in the clear is.
    const confinement = {
      namespace: "shop",
      allowNamespaces: [],
      allowClusterKinds: [],
      createNamespace: false,
    };
    expect(confine(withRefs(objects), confinement).refused).toEqual([]);
    const clear = await renderPath(repo({ "prod/secret.yaml": SECRET_YAML }), "prod", {
      env: renderEnv(),
      sops: {},
    });
    expect(clear[0]!.decrypted).toBeUndefined();
    expect(confine(withRefs(clear), confinement).refused).toEqual([
      expect.objectContaining({
        reason: expect.stringMatching(/^a plaintext Secret \(stringData\) from Git/),
      }),
    ]);
  });

  it("decrypts an encrypted env file before kustomize, so a secretGenerator reads it; a plaintext generator stays unmarked", async () => {
    const root = repo({
      "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n",
      "base/kustomization.yaml": "resources: [cm.yaml]\n",
      "prod/api.enc.env": sopsEncrypt(`TOKEN=${TOKEN}\nREGION=eu-west-1\n`, "dotenv", key.recipient),
      "prod/plain.env": "MODE=fast\n",
      "prod/kustomization.yaml":
        "resources: [../base]\nsecretGenerator:\n  - name: api\n    envs: [api.enc.env]\n  - name: plain\n    envs: [plain.env]\n",
    });
    const env = renderEnv();
    const objects = await renderPath(root, "prod", { env, sops: { ageKeyFile: key.file } });
    const api = objects.find((rendered) => rendered.object.metadata.name.startsWith("api-"))!;
    const data = (api.object as unknown as { data: Record<string, string> }).data;
    expect(Buffer.from(data.TOKEN!, "base64").toString()).toBe(TOKEN);
    expect(Object.keys(data).sort()).toEqual(["REGION", "TOKEN"]);
    expect(api.decrypted).toBe(true);
    expect(
      objects.find((rendered) => rendered.object.metadata.name.startsWith("plain-"))!.decrypted,
    ).toBeUndefined();
    expect(allText(root)).not.toContain(TOKEN);
    expect(readdirSync(env.TMPDIR!)).toEqual([]);
  });

  it("decrypts only what the render reads: another environment's file, for another key, is left alone", async () => {
    const root = repo({
      "staging/secret.yaml": sopsEncrypt(SECRET_YAML, "yaml", key.recipient),
      "prod/secret.yaml": sopsEncrypt(SECRET_YAML, "yaml", otherKey.recipient),
      "prod/kustomization.yaml": "resources: [secret.yaml]\n",
      "staging/kustomization.yaml": "resources: [secret.yaml]\n",
    });
    const objects = await renderPath(root, "staging", { env: renderEnv(), sops: { ageKeyFile: key.file } });
    expect(objects[0]!.object).toMatchObject({ stringData: { password: PASSWORD } });
    // The same key cannot decrypt prod's file: rendering prod fails, naming it.
    await expect(
      renderPath(root, "prod", { env: renderEnv(), sops: { ageKeyFile: key.file } }),
    ).rejects.toThrow(
      `cannot decrypt prod/secret.yaml: no key in ${key.file} (--sops-age-key-file) matches its recipients`,
    );
  });

  it("decrypts an encrypted JSON manifest", async () => {
    const json = JSON.stringify({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "j" },
      data: { password: Buffer.from(PASSWORD).toString("base64") },
    });
    const root = repo({ "prod/secret.json": sopsEncrypt(json, "json", key.recipient) });
    const [secret] = await renderPath(root, "prod", { env: renderEnv(), sops: { ageKeyFile: key.file } });
    expect(secret!.object).toMatchObject({ data: { password: Buffer.from(PASSWORD).toString("base64") } });
    expect(secret!.decrypted).toBe(true);
  });

  it("without decryption (the App's renders) the file stays ciphertext", async () => {
    const root = repo({ "prod/secret.yaml": sopsEncrypt(SECRET_YAML, "yaml", key.recipient) });
    const [secret] = await renderPath(root, "prod", { env: renderEnv() });
    expect(JSON.stringify(secret!.object)).not.toContain(PASSWORD);
    expect(secret!.object).toHaveProperty("sops");
  });

  it("refuses a missing key file, a wrong key and a corrupted file in one line naming the file, leaving nothing behind", async () => {
    const encrypted = sopsEncrypt(SECRET_YAML, "yaml", key.recipient);
    const root = repo({ "prod/secret.yaml": encrypted });
    const failureOf = async (options: Parameters<typeof renderPath>[2], tree = root) => {
      const env = renderEnv();
      const error = await renderPath(tree, "prod", { ...options, env }).then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
      expect(readdirSync(env.TMPDIR!)).toEqual([]);
      expect(error).toBeInstanceOf(Error);
      expect(error!.message).not.toContain("\n");
      expect(error!.message).not.toContain(PASSWORD);
      expect(error!.message).not.toMatch(/AGE-SECRET-KEY/);
      return error!.message;
    };
    expect(await failureOf({ sops: { ageKeyFile: "/nonexistent/age.agekey" } })).toBe(
      "cannot decrypt prod/secret.yaml: the SOPS age key file /nonexistent/age.agekey (--sops-age-key-file) cannot be read (ENOENT)",
    );
    expect(await failureOf({ sops: { ageKeyFile: key.file, sops: "/nonexistent/sops" } })).toBe(
      `cannot decrypt prod/secret.yaml: ${MISSING_SOPS_HELP}`,
    );
    expect(await failureOf({ sops: { ageKeyFile: otherKey.file } })).toBe(
      `cannot decrypt prod/secret.yaml: no key in ${otherKey.file} (--sops-age-key-file) matches its recipients`,
    );
    // A ciphertext edited by hand: sops's MAC check refuses it.
    const value = /password: (ENC\[AES256_GCM,data:)([^,]+)/.exec(encrypted)!;
    const flipped = value[2]![0] === "A" ? "B" : "A";
    const corrupted = encrypted.replace(value[0], `password: ${value[1]}${flipped}${value[2]!.slice(1)}`);
    expect(corrupted).not.toBe(encrypted);
    const message = await failureOf(
      { sops: { ageKeyFile: key.file } },
      repo({ "prod/secret.yaml": corrupted }),
    );
    expect(message).toMatch(/^cannot decrypt prod\/secret\.yaml: /);
    expect(message).toMatch(/corrupted/);
  });

  it("runs sops with PATH, HOME, TMPDIR and the key file only, in a private 0700 copy", async () => {
    const sops = findExecutable("sops", process.env.PATH)!;
    const bin = tempDir("ferry-sops-bin-");
    const log = path.join(bin, "seen.log");
    // A stand-in that records what sops would see, then runs the real one.
    writeFileSync(
      path.join(bin, "sops"),
      `#!/bin/sh\nenv > ${log}.env\nfor f in "$TMPDIR"/ferry-sops-*; do stat -c '%a' "$f"; done > ${log}.mode\nexec ${sops} "$@"\n`,
    );
    chmodSync(path.join(bin, "sops"), 0o755);
    const root = repo({ "prod/secret.yaml": sopsEncrypt(SECRET_YAML, "yaml", key.recipient) });
    const env = {
      ...renderEnv(),
      FERRY_GITHUB_TOKEN: "ghs_never_given_to_sops",
      FERRY_GIT_TOKEN: "git_never_given",
      AWS_SECRET_ACCESS_KEY: "aws_never_given",
      SOPS_AGE_KEY: "AGE-SECRET-KEY-NEVER-GIVEN",
    };
    await renderPath(root, "prod", { env, sops: { ageKeyFile: key.file, sops: path.join(bin, "sops") } });
    const names = readFileSync(`${log}.env`, "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => line.slice(0, line.indexOf("=")))
      // What /bin/sh itself sets.
      .filter((name) => !["PWD", "SHLVL", "_", "OLDPWD"].includes(name))
      .sort();
    expect(names).toEqual(["HOME", "PATH", "SOPS_AGE_KEY_FILE", "TMPDIR"]);
    expect(readFileSync(`${log}.env`, "utf8")).toContain(`SOPS_AGE_KEY_FILE=${key.file}\n`);
    expect(readFileSync(`${log}.mode`, "utf8").trim()).toBe("700");
  });
});
