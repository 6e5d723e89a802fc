/**
 * dist/ runs each short command from one CommonJS bundle, `dist/commands/<name>.cjs`
 * (deploy/bundle-cli.mjs), compiled through a V8 code cache written when the command's first run
 * exits (docs/capacity.md "Start-up"). Node's own compile cache is written when a module is
 * compiled, before it runs, so it holds only what V8 compiles eagerly: every function a command
 * then runs was compiled again on every run. A cache written at exit holds them all.
 *
 * The cache is code this process will run, so it is read and written only in a directory of this
 * user's own that no one else can write.
 */
import type { Script } from "node:vm";
import type { CommandRun } from "./io.js";
import type { runCommand } from "./run-command.js";

// Node's modules taken without their ESM face, whose set-up cost every command about 4 ms
// (docs/capacity.md "Start-up").
const { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } =
  process.getBuiltinModule("node:fs") as typeof import("node:fs");
const { createRequire } = process.getBuiltinModule("node:module") as typeof import("node:module");
const { tmpdir } = process.getBuiltinModule("node:os") as typeof import("node:os");
const { basename, dirname, join } = process.getBuiltinModule("node:path") as typeof import("node:path");
const vm = process.getBuiltinModule("node:vm") as typeof import("node:vm");

/** What a command bundle exports: the command, and the error mapping its own errors meet. */
export interface CommandBundle {
  run: CommandRun;
  runCommand: typeof runCommand;
}

/** The cache's directory and the user who must own it. */
export interface CodeCache {
  dir: string;
  uid: number;
}

/** What became of the cache on this load (the tests read it). */
export type CacheUse = "off" | "accepted" | "written at exit";

/**
 * Where the cache lives: under NODE_COMPILE_CACHE when it is set (Node's own switch), else in a
 * directory of this user's own in the OS temporary directory. None when NODE_DISABLE_COMPILE_CACHE
 * is set, as Node's, or where the platform has no user ids to check the directory's owner by.
 */
export function codeCacheOf(env: NodeJS.ProcessEnv, uid: number | undefined): CodeCache | undefined {
  if (env.NODE_DISABLE_COMPILE_CACHE || uid === undefined) return undefined;
  const dir = env.NODE_COMPILE_CACHE
    ? join(env.NODE_COMPILE_CACHE, "ferry")
    : join(tmpdir(), `ferry-code-cache-${uid}`);
  return { dir, uid };
}

/** The directory exists (made 0700 if not), is a directory, not a link, owned by `uid`, and closed to others. */
function isPrivateDir(dir: string, uid: number): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stat = lstatSync(dir);
    return stat.isDirectory() && stat.uid === uid && (stat.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/**
 * Loads and runs a bundle. The cache, when it was missing or V8 refused it, is written by the
 * function handed to `atExit` (the process's exit: by then the command has run).
 */
export function loadCommandBundle(
  file: string,
  cache: CodeCache | undefined,
  atExit: (write: () => void) => void = (write) => process.once("exit", write),
): { bundle: CommandBundle; cache: CacheUse } {
  // V8 checks a cache against the source's length only, so the name also carries the bundle's
  // identity on disk (a build writes a new file), taken before the read, and Node's flags.
  const stat = statSync(file, { bigint: true });
  const bytes = readFileSync(file);
  const source = bytes.toString("utf8");
  const flags = [...process.execArgv.join(" ")].reduce(
    (hash, char) => (hash * 31 + char.charCodeAt(0)) >>> 0,
    7,
  );
  const command = basename(file, ".cjs");
  const name = `${command}-${process.version}-${process.arch}-${flags.toString(36)}-`;
  const identity = [stat.ino, stat.size, stat.mtimeNs].map((part) => part.toString(36)).join("-");
  const cacheFile =
    cache && BigInt(bytes.length) === stat.size && isPrivateDir(cache.dir, cache.uid)
      ? join(cache.dir, `${name}${identity}.bin`)
      : undefined;
  let cachedData: Buffer | undefined;
  if (cacheFile !== undefined) {
    try {
      cachedData = readFileSync(cacheFile);
    } catch {
      // none yet
    }
  }
  // Node's own CommonJS wrapper, on the source's first line, so that line numbers hold.
  const wrapped = `(function (exports, require, module, __filename, __dirname) { ${source}\n});`;
  const script = new vm.Script(wrapped, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = { exports: {} as CommandBundle };
  (script.runInThisContext() as (...args: unknown[]) => void)(
    module.exports,
    createRequire(file),
    module,
    file,
    dirname(file),
  );
  if (cacheFile === undefined) return { bundle: module.exports, cache: "off" };
  if (cachedData !== undefined && !script.cachedDataRejected)
    return { bundle: module.exports, cache: "accepted" };
  atExit(() => writeCache(script, cacheFile, command, name));
  return { bundle: module.exports, cache: "written at exit" };
}

/**
 * Writes the cache beside, then renames it into place (a concurrent run reads the old or the new,
 * never half of one). Removes this command's caches of an older build for the same Node and flags,
 * those of other Node versions or flags unused for a month, and partial files an hour old: the
 * directory holds about one file per command and Node in use. A directory that cannot be written leaves the command as it
 * was, uncached.
 */
function writeCache(script: Script, cacheFile: string, command: string, name: string): void {
  const partial = `${cacheFile}.${process.pid}.partial`;
  try {
    writeFileSync(partial, script.createCachedData(), { mode: 0o600, flag: "wx" });
    renameSync(partial, cacheFile);
    const dir = dirname(cacheFile);
    const monthAgo = Date.now() - 30 * 24 * 3600 * 1000;
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (!entry.startsWith(`${command}-v`) || path === cacheFile) continue;
      const used = statSync(path);
      // A partial file an hour old is one whose writer was killed before the rename.
      const stale = entry.endsWith(".bin")
        ? entry.startsWith(name) || Math.max(used.atimeMs, used.mtimeMs) < monthAgo
        : entry.endsWith(".partial") && used.mtimeMs < Date.now() - 3600 * 1000;
      if (stale) rmSync(path, { force: true });
    }
  } catch {
    try {
      rmSync(partial, { force: true });
    } catch {
      // nothing more to do at exit
    }
  }
}
