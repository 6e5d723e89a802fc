import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { PUBLIC_GOOD_TUF_MIRROR, refreshTrustedRoot, TrustedRootError } from "../adapters/registry/index.js";
import { UserError } from "../core/errors.js";
import { EXIT, UsageError, type CliIo } from "./io.js";

const USAGE = "usage: ferry trust-root refresh --out FILE [--mirror URL --tuf-root FILE] [--timeout SECONDS]";

/**
 * `ferry trust-root refresh`: fetches the Sigstore trusted root through TUF (metadata verified from
 * the starting TUF root, the target checked against the signed hashes) and writes it to `--out`
 * for FERRY_SIGSTORE_TRUSTED_ROOT, for operators who refresh out of band (e.g. a CronJob). The file
 * is replaced whole, and only by a verified root: a failed refresh leaves the previous one.
 */
export async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      out: { type: "string" },
      mirror: { type: "string" },
      "tuf-root": { type: "string" },
      timeout: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    io.stdout(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length !== 1 || positionals[0] !== "refresh") throw new UsageError(USAGE);
  if (values.out === undefined) throw new UsageError(`--out is required\n${USAGE}`);
  const mirror = values.mirror ?? PUBLIC_GOOD_TUF_MIRROR;
  if (values["tuf-root"] === undefined && mirror.replace(/\/+$/, "") !== PUBLIC_GOOD_TUF_MIRROR)
    throw new UsageError(`--tuf-root (the TUF root.json to start from) is required with --mirror\n${USAGE}`);
  const timeoutSeconds = values.timeout === undefined ? 30 : Number(values.timeout);
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 600)
    throw new UsageError(`--timeout must be a whole number of seconds from 1 to 600\n${USAGE}`);
  const out = resolve(io.cwd, values.out);
  // A fresh TUF cache each run: trust starts from the given (or shipped) TUF root every time.
  const cachePath = mkdtempSync(join(tmpdir(), "ferry-trust-root-"));
  try {
    const { root, json } = await refreshTrustedRoot({
      cachePath,
      mirrorURL: mirror,
      ...(values["tuf-root"] !== undefined ? { rootPath: resolve(io.cwd, values["tuf-root"]) } : {}),
      timeoutMs: timeoutSeconds * 1000,
    });
    const partial = join(dirname(out), `.${Date.now()}.trusted_root.json.partial`);
    try {
      writeFileSync(partial, json);
      renameSync(partial, out);
    } catch (error) {
      rmSync(partial, { force: true });
      throw new UserError(
        "trusted-root-write",
        `cannot write ${values.out}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    io.stdout(
      `wrote ${values.out}: ${root.certificateAuthorities.length} certificate authorities, ${root.tlogs.length} transparency logs\n`,
    );
    return EXIT.ok;
  } catch (error) {
    if (error instanceof TrustedRootError) throw new UserError("trusted-root-refresh", error.message);
    throw error;
  } finally {
    rmSync(cachePath, { recursive: true, force: true });
  }
}
