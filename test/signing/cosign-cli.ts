import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import {
  generateKeyPair,
  pushAttestation,
  pushSignature,
  signWithKey,
  type SignBytes,
} from "./cosign-artifacts.js";

/**
 * The signer the end-to-end tests use: the real cosign CLI built by build-cosign.sh when it is in
 * the cache (or FERRY_COSIGN_BINARY), else the same artifacts written with node:crypto in cosign's
 * documented format (cosign-artifacts.ts). `kind` says which, so a report can tell.
 */
export const COSIGN_VERSION = process.env.FERRY_COSIGN_VERSION ?? "v2.6.5";

export function cosignBinary(): string | undefined {
  const path =
    process.env.FERRY_COSIGN_BINARY ??
    join(
      process.env.FERRY_COSIGN_CACHE ??
        join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "ferry/cosign"),
      COSIGN_VERSION,
      "cosign",
    );
  if (existsSync(path)) return path;
  // CI's second signing run: the real CLI or a failure, never the node:crypto fallback.
  if (process.env.FERRY_REQUIRE_COSIGN === "1")
    throw new Error(`FERRY_REQUIRE_COSIGN=1 but cosign is not at ${path}: run test/signing/build-cosign.sh`);
  return undefined;
}

export interface Signer {
  kind: "cosign" | "node:crypto";
  publicPem: string;
  /** Signs `name@digest` (name is host/repository) and pushes the signature to the registry. */
  sign(registryUrl: string, repository: string, name: string, digest: string): Promise<void>;
  /** Signs arbitrary payload bytes with the same key (`cosign sign-blob`), for crafted artifacts. */
  signBytes: SignBytes;
  /**
   * Attests `name@digest` with a SLSA provenance v0.2 predicate
   * (`cosign attest --type slsaprovenance --key … --tlog-upload=false`).
   */
  attestProvenance(
    registryUrl: string,
    repository: string,
    name: string,
    digest: string,
    predicate: unknown,
  ): Promise<void>;
}

/** `prefer`: "cosign" insists on the CLI; `signFlags` are extra `cosign sign` flags. */
export function createSigner(prefer?: "cosign", signFlags: string[] = []): Signer {
  const binary = cosignBinary();
  if (binary === undefined && prefer === "cosign")
    throw new Error("cosign is not built: run test/signing/build-cosign.sh");
  if (binary === undefined) {
    const pair = generateKeyPair();
    const signBytes = signWithKey(pair.privateKey);
    return {
      kind: "node:crypto",
      publicPem: pair.publicPem,
      signBytes,
      sign: (registryUrl, repository, name, digest) =>
        pushSignature(registryUrl, repository, name, digest, signBytes),
      attestProvenance: (registryUrl, repository, _name, digest, predicate) =>
        pushAttestation(
          registryUrl,
          repository,
          digest,
          "https://slsa.dev/provenance/v0.2",
          predicate,
          pair.privateKey,
        ),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), "ferry-cosign-"));
  // A throw-away password for a throw-away key pair; cosign needs one to encrypt the private key.
  // COSIGN_EXPERIMENTAL: cosign 2.x needs it for --registry-referrers-mode=oci-1-1.
  const env = {
    ...process.env,
    COSIGN_PASSWORD: "ferry-test-key",
    COSIGN_YES: "true",
    COSIGN_EXPERIMENTAL: "1",
    HOME: dir,
  };
  execFileSync(binary, ["generate-key-pair"], { cwd: dir, env, stdio: "pipe" });
  return {
    kind: "cosign",
    publicPem: readFileSync(join(dir, "cosign.pub"), "utf8"),
    async signBytes(payload) {
      const file = join(dir, "payload.json");
      writeFileSync(file, payload);
      return execFileSync(
        binary,
        ["sign-blob", "--key", join(dir, "cosign.key"), "--tlog-upload=false", file],
        { cwd: dir, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 },
      ).trim();
    },
    async attestProvenance(_registryUrl, _repository, name, digest, predicate) {
      const file = join(dir, "provenance.json");
      writeFileSync(file, JSON.stringify(predicate));
      execFileSync(
        binary,
        [
          "attest",
          "--type",
          "slsaprovenance",
          "--predicate",
          file,
          "--key",
          join(dir, "cosign.key"),
          "--tlog-upload=false",
          "--allow-http-registry",
          "--allow-insecure-registry",
          `${name}@${digest}`,
        ],
        { cwd: dir, env, stdio: "pipe", timeout: 60_000 },
      );
    },
    async sign(_registryUrl, _repository, name, digest) {
      execFileSync(
        binary,
        [
          "sign",
          "--key",
          join(dir, "cosign.key"),
          "--tlog-upload=false",
          "--allow-http-registry",
          "--allow-insecure-registry",
          ...signFlags,
          `${name}@${digest}`,
        ],
        { cwd: dir, env, stdio: "pipe", timeout: 60_000 },
      );
    },
  };
}
