/**
 * SOPS decrypted at render time, in the reconciler only (docs/security.md, "SOPS"): the checkout
 * is scanned for files carrying SOPS metadata (core/sops-file.ts); when there are any, the tree is
 * copied into a private (0700) temporary folder, the render runs on that copy, and each of those
 * files that the render reads (after its input checks, before kustomize or helm runs, so a
 * secretGenerator reads decrypted env files) is replaced there by what the real `sops decrypt`
 * prints. The copy is removed when the render ends, whatever happened.
 * The shared checkout is never written. `sops` runs as a bounded child whose environment is PATH,
 * HOME, TMPDIR and SOPS_AGE_KEY_FILE only: none of the reconciler's tokens or other variables.
 */
import { spawn } from "node:child_process";
import { constants } from "node:fs";
import {
  access,
  chmod,
  cp,
  lstat,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { UserError } from "../core/errors.js";
import { sopsEncryptedFormat, sopsFormatOfName, type SopsFormat } from "../core/sops-file.js";
import { memoryLimitEnforced, MISSING_SOPS_HELP } from "../adapters/render/render-tools.js";
import { DecryptedValues } from "./sops-provenance.js";

export interface SopsOptions {
  /** `--sops-age-key-file`: the age identities sops decrypts with (a mounted Secret's file). */
  ageKeyFile?: string;
  /** The sops binary; `sops` from PATH when absent. */
  sops?: string;
  /** Per file; default 30 s. */
  timeoutMs?: number;
  /** sops's data limit in bytes (Linux, `ulimit -d`, as the renderer's); default 384 MiB. */
  memoryLimitBytes?: number;
}

export interface SopsScanLimits {
  /** Entries walked in the checkout before the scan gives up. */
  maxEntries: number;
  /** Files larger than this are not read (the input checks refuse them if a render reads them). */
  maxFileBytes: number;
}

export const DEFAULT_SOPS_SCAN_LIMITS: SopsScanLimits = { maxEntries: 50_000, maxFileBytes: 4 * 1024 * 1024 };

/** The variables `sops` is given, when set: nothing else of the reconciler's environment. */
const SOPS_ENV = ["PATH", "HOME", "TMPDIR"];

export interface EncryptedFile {
  /** Repo-relative, `/`-separated. */
  relative: string;
  format: SopsFormat;
}

/** The SOPS-encrypted files of the tree at `root`, sorted; `.git` and symlinks are skipped. */
export async function findEncryptedFiles(
  root: string,
  limits: SopsScanLimits = DEFAULT_SOPS_SCAN_LIMITS,
): Promise<EncryptedFile[]> {
  const found: EncryptedFile[] = [];
  let entries = 0;
  const walk = async (dir: string, prefix: string): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      if (name === ".git") continue;
      if (++entries > limits.maxEntries)
        throw new UserError(
          "sops-scan-too-large",
          `the config repo has more than ${limits.maxEntries} files; not scanned for SOPS-encrypted files`,
        );
      const full = path.join(dir, name);
      const relative = prefix ? `${prefix}/${name}` : name;
      const info = await lstat(full);
      if (info.isDirectory()) await walk(full, relative);
      else if (info.isFile() && info.size <= limits.maxFileBytes && sopsFormatOfName(name) !== undefined) {
        const format = sopsEncryptedFormat(name, await readFile(full, "utf8"));
        if (format) found.push({ relative, format });
      }
    }
  };
  await walk(root, "");
  return found;
}

/**
 * The private copy of a checkout holding SOPS-encrypted files: `decrypt` replaces those among the
 * files a render reads by their plaintext (each once), so an encrypted file the render does not
 * read (another environment's, for another key) is never decrypted.
 */
export class DecryptedTree {
  /** HMACs of the decrypted values (sops-provenance.ts). */
  readonly values = new DecryptedValues();
  private readonly pending: Map<string, EncryptedFile>;

  constructor(
    readonly root: string,
    encrypted: EncryptedFile[],
    private readonly options: SopsOptions,
    private readonly env: NodeJS.ProcessEnv,
    private readonly maxBytes: number,
  ) {
    this.pending = new Map(encrypted.map((file) => [path.join(root, ...file.relative.split("/")), file]));
  }

  /** Decrypts the encrypted ones among `files` (absolute paths in the copy). */
  async decrypt(files: Iterable<string>): Promise<void> {
    for (const target of files) {
      const file = this.pending.get(target);
      if (!file) continue;
      this.pending.delete(target);
      if (this.options.ageKeyFile !== undefined) await checkKeyFile(this.options.ageKeyFile, file.relative);
      const plaintext = await runSops(target, file, this.options, this.env, this.maxBytes);
      await chmod(target, 0o600);
      await writeFile(target, plaintext, { mode: 0o600 });
      this.values.addFile(file.format, plaintext);
    }
  }

  /** Decrypts the encrypted files under `folder` (absolute, in the copy). */
  decryptUnder(folder: string): Promise<void> {
    return this.decrypt([...this.pending.keys()].filter((file) => file.startsWith(folder + path.sep)));
  }
}

/**
 * Runs `render` on `root`, or, when the tree holds SOPS-encrypted files, on a private copy of it
 * (removed afterwards) whose files `render` decrypts as it learns which it reads.
 */
export async function withDecryptedTree<T>(
  root: string,
  options: SopsOptions,
  env: NodeJS.ProcessEnv,
  render: (root: string, tree: DecryptedTree | undefined) => Promise<T>,
  limits: SopsScanLimits = DEFAULT_SOPS_SCAN_LIMITS,
): Promise<T> {
  const realRoot = await realpath(root);
  const encrypted = await findEncryptedFiles(realRoot, limits);
  if (encrypted.length === 0) return render(root, undefined);
  const made = await mkdtemp(path.join(env.TMPDIR ?? tmpdir(), "ferry-sops-"));
  try {
    await chmod(made, 0o700);
    const copy = await realpath(made);
    await cp(realRoot, copy, {
      recursive: true,
      verbatimSymlinks: true,
      filter: (source) => path.basename(source) !== ".git",
    });
    return await render(copy, new DecryptedTree(copy, encrypted, options, env, limits.maxFileBytes));
  } finally {
    await rm(made, { recursive: true, force: true });
  }
}

async function checkKeyFile(file: string, first: string): Promise<void> {
  try {
    await access(file, constants.R_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new UserError(
      "sops-key-missing",
      `cannot decrypt ${first}: the SOPS age key file ${file} (--sops-age-key-file) cannot be read (${code})`,
    );
  }
}

/** What sops's exit status means, in one line that holds nothing from the file or the key. */
function reasonOf(code: number | null, options: SopsOptions): string {
  switch (code) {
    case 128:
      return options.ageKeyFile !== undefined
        ? `no key in ${options.ageKeyFile} (--sops-age-key-file) matches its recipients`
        : "no key can decrypt it (no --sops-age-key-file is set)";
    case 51:
      return "its MAC does not match: the file was changed after it was encrypted, or is corrupted";
    case 52:
      return "it has no MAC: the file is corrupted";
    case 24:
    case 25:
      return "its values cannot be decrypted with its data key: the file is corrupted";
    case 2:
    case 1:
      return "sops cannot read it as SOPS-encrypted (a corrupted or hand-edited file)";
    case 125:
      return "cannot set sops's memory limit (ulimit -d)";
    default:
      return `sops failed (exit ${code ?? "signal"})`;
  }
}

function runSops(
  file: string,
  encrypted: EncryptedFile,
  options: SopsOptions,
  env: NodeJS.ProcessEnv,
  maxBytes: number,
): Promise<string> {
  const childEnv: NodeJS.ProcessEnv = {};
  for (const name of SOPS_ENV) if (env[name] !== undefined) childEnv[name] = env[name];
  if (options.ageKeyFile !== undefined) childEnv.SOPS_AGE_KEY_FILE = options.ageKeyFile;
  const where = `cannot decrypt ${encrypted.relative}`;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const args = ["decrypt", "--input-type", encrypted.format, "--output-type", encrypted.format, file];
  // A `/bin/sh` wrapper sets the data limit, then execs sops (exit 127: not on PATH).
  const limit = memoryLimitEnforced() ? 'ulimit -d "$1" || exit 125; ' : "";
  const kib = String(Math.floor((options.memoryLimitBytes ?? 384 * 1024 * 1024) / 1024));
  const wrapped = ["-c", `${limit}shift; exec "$@"`, "ferry-sops", kib, options.sops ?? "sops", ...args];
  return new Promise((resolve, reject) => {
    const child = spawn("/bin/sh", wrapped, {
      cwd: path.dirname(file),
      env: childEnv,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let failure: UserError | undefined;
    const stop = (error: UserError) => {
      failure ??= error;
      child.kill("SIGKILL");
    };
    const timer = setTimeout(
      () => stop(new UserError("sops-timeout", `${where}: sops did not finish within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.stdout.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > maxBytes)
        stop(new UserError("sops-too-large", `${where}: its plaintext exceeds ${maxBytes} bytes`));
      else chunks.push(chunk);
    });
    // sops's own report is multi-line and may quote the file; only its exit status is used.
    child.stderr.resume();
    child.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        error.code === "ENOENT"
          ? new UserError("sops-missing", `${where}: ${MISSING_SOPS_HELP}`)
          : new UserError("sops-failed", `${where}: cannot run sops (${error.code ?? "error"})`),
      );
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (failure) reject(failure);
      else if (code === 127 && bytes === 0)
        reject(new UserError("sops-missing", `${where}: ${MISSING_SOPS_HELP}`));
      else if (code !== 0) reject(new UserError("sops-failed", `${where}: ${reasonOf(code, options)}`));
      else resolve(Buffer.concat(chunks).toString("utf8"));
    });
  });
}
