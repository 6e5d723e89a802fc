/**
 * Real age keys and real SOPS encryption for the tests: `age-keygen` makes an identity file,
 * `sops encrypt --age` encrypts with its recipient (both built by test/support/provision.sh at the
 * versions src/adapters/render/render-tools.ts pins). No vitest here: the cluster tier imports it too.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { SopsFormat } from "../../src/core/sops-file.js";

export interface AgeKey {
  /** The identity file (`AGE-SECRET-KEY-…`), as --sops-age-key-file names it. */
  file: string;
  /** The `age1…` recipient. */
  recipient: string;
}

/** A new age identity in its own file under `dir`. */
export function makeAgeKey(dir: string, name = "age.agekey"): AgeKey {
  const file = path.join(dir, name);
  execFileSync("age-keygen", ["-o", file], { stdio: ["ignore", "ignore", "pipe"] });
  const recipient = /# public key: (age1[0-9a-z]+)/.exec(readFileSync(file, "utf8"))?.[1];
  if (!recipient) throw new Error(`age-keygen wrote no public key into ${file}`);
  return { file, recipient };
}

/** `text` encrypted by the real sops for `recipient`, in `format`. */
export function sopsEncrypt(text: string, format: SopsFormat, recipient: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "ferry-sops-encrypt-"));
  const extension = format === "dotenv" ? "env" : format;
  const file = path.join(dir, `plain.${extension}`);
  writeFileSync(file, text);
  try {
    return execFileSync(
      "sops",
      ["encrypt", "--age", recipient, "--input-type", format, "--output-type", format, file],
      // No key material and no config from the caller's environment.
      { cwd: dir, env: { PATH: process.env.PATH, HOME: dir }, encoding: "utf8" },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
