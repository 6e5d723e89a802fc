/**
 * A short command's bundle run through a code cache written after its first run
 * (src/cli/command-bundle.ts, docs/capacity.md "Start-up"): what is cached, when V8's refusal
 * leads to a new cache, and where the cache is never read or written.
 */
import { execFile } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { codeCacheOf, loadCommandBundle } from "../../src/cli/command-bundle.js";

const UID = process.getuid!();
const MODULE = join(import.meta.dirname, "..", "..", "src", "cli", "command-bundle.ts");

/**
 * One command run in a process of its own, as the CLI runs it: V8 keeps what it compiled in the
 * process, so only a new process shows whether the cache on disk was taken. The cache is
 * written when that process exits.
 */
async function runInProcess(file: string, dir: string, uid = UID): Promise<{ cache: string; out: string }> {
  const script = [
    `import { loadCommandBundle } from ${JSON.stringify(MODULE)};`,
    `const loaded = loadCommandBundle(${JSON.stringify(file)}, { dir: ${JSON.stringify(dir)}, uid: ${uid} });`,
    `let out = "";`,
    `const io = { stdout: (text) => (out += text) };`,
    `const code = await loaded.bundle.runCommand("select", async () => loaded.bundle, ["x.txt"], io);`,
    `console.log(JSON.stringify({ cache: loaded.cache, out: code + " " + out }));`,
  ].join("\n");
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "--input-type=module", "-e", script],
    {
      timeout: 240_000,
    },
  );
  return JSON.parse(stdout) as { cache: string; out: string };
}

/** A command bundle as deploy/bundle-cli.mjs writes one: CommonJS, `run` and `runCommand`. */
function bundleSource(answer: string): string {
  return [
    `"use strict";`,
    `const { join } = require("node:path");`,
    `exports.run = async (args, io) => {`,
    // An import() from the bundle: Node's own loader answers it (importModuleDynamically).
    `  const { basename } = await import("node:path");`,
    `  io.stdout(${JSON.stringify(answer)} + " " + basename(join("a", args[0] ?? "none")));`,
    `  return 0;`,
    `};`,
    `exports.runCommand = async (name, load, args, io) => (await load()).run(args, io);`,
    "",
  ].join("\n");
}

describe("loadCommandBundle", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  async function setUp(): Promise<{ file: string; cacheDir: string; writes: (() => void)[] }> {
    const dir = await mkdtemp(join(tmpdir(), "ferry-command-bundle-"));
    dirs.push(dir);
    const file = join(dir, "select.cjs");
    writeFileSync(file, bundleSource("chose"));
    return { file, cacheDir: join(dir, "cache"), writes: [] };
  }

  it("writes the cache when the first run exits, and runs from it after", async () => {
    const { file, cacheDir } = await setUp();
    expect(await runInProcess(file, cacheDir)).toEqual({ cache: "written at exit", out: "0 chose x.txt" });
    const [written] = readdirSync(cacheDir);
    expect(written).toMatch(
      new RegExp(`^select-${process.version}-${process.arch}-[0-9a-z]+-[0-9a-z-]+\\.bin$`),
    );
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(cacheDir, written!)).mode & 0o777).toBe(0o600);
    expect(await runInProcess(file, cacheDir)).toEqual({ cache: "accepted", out: "0 chose x.txt" });
    expect(readdirSync(cacheDir)).toEqual([written]);
  });

  it("writes a new cache over one V8 refuses, and the command runs all the same", async () => {
    const { file, cacheDir } = await setUp();
    await runInProcess(file, cacheDir);
    const [name] = readdirSync(cacheDir);
    const cacheFile = join(cacheDir, name!);
    writeFileSync(cacheFile, readFileSync(cacheFile).subarray(0, 64));
    expect(await runInProcess(file, cacheDir)).toEqual({ cache: "written at exit", out: "0 chose x.txt" });
    expect(readdirSync(cacheDir)).toEqual([name]);
    expect(readFileSync(cacheFile).length).toBeGreaterThan(64);
    expect((await runInProcess(file, cacheDir)).cache).toBe("accepted");
  });

  it("never runs a cache of an older build of the same length, and keeps one file per command", async () => {
    const { file, cacheDir } = await setUp();
    await runInProcess(file, cacheDir);
    const [older] = readdirSync(cacheDir);
    // A rebuild: the same length (all V8 checks), another answer; a new file, as a build writes.
    const rebuilt = bundleSource("CHOSE");
    expect(rebuilt.length).toBe(bundleSource("chose").length);
    await rm(file);
    writeFileSync(file, rebuilt);
    expect(await runInProcess(file, cacheDir)).toEqual({ cache: "written at exit", out: "0 CHOSE x.txt" });
    const files = readdirSync(cacheDir);
    expect(files).toHaveLength(1);
    expect(files[0]).not.toBe(older);
  });

  it("removes another Node's or flags' cache of the same command once unused for a month, a killed writer's partial file, and no other command's", async () => {
    const { file, cacheDir } = await setUp();
    mkdirSync(cacheDir, { mode: 0o700 });
    const monthsAgo = new Date(Date.now() - 40 * 24 * 3600 * 1000);
    const hoursAgo = new Date(Date.now() - 2 * 3600 * 1000);
    const others = [
      "select-v22.0.0-x64-7-a-b-c.bin",
      "select-v20.0.0-x64-7-a-b-c.bin",
      "plan-v22.0.0-x64-7-a-b-c.bin",
      "select-v22.0.0-x64-7-a-b-c.bin.123.partial",
      "select-v22.0.0-x64-7-a-b-d.bin.456.partial",
    ];
    for (const other of others) writeFileSync(join(cacheDir, other), "old");
    utimesSync(join(cacheDir, "select-v22.0.0-x64-7-a-b-c.bin"), monthsAgo, monthsAgo);
    utimesSync(join(cacheDir, "plan-v22.0.0-x64-7-a-b-c.bin"), monthsAgo, monthsAgo);
    utimesSync(join(cacheDir, "select-v22.0.0-x64-7-a-b-c.bin.123.partial"), hoursAgo, hoursAgo);
    await runInProcess(file, cacheDir);
    const left = readdirSync(cacheDir).sort();
    // A partial file written just now may be a writer still at work: it stays.
    expect(left.filter((entry) => !entry.startsWith(`select-${process.version}`))).toEqual([
      "plan-v22.0.0-x64-7-a-b-c.bin",
      "select-v20.0.0-x64-7-a-b-c.bin",
      "select-v22.0.0-x64-7-a-b-d.bin.456.partial",
    ]);
  });

  it("reads and writes no cache in a directory others can write, one that is a link, or one it cannot make", async () => {
    const { file, cacheDir, writes } = await setUp();
    mkdirSync(cacheDir);
    chmodSync(cacheDir, 0o777);
    const open = loadCommandBundle(file, { dir: cacheDir, uid: UID }, (write) => writes.push(write));
    expect([open.cache, writes.length]).toEqual(["off", 0]);
    expect(await runInProcess(file, cacheDir)).toEqual({ cache: "off", out: "0 chose x.txt" });

    const linked = join(cacheDir, "..", "linked");
    const target = join(cacheDir, "..", "private");
    mkdirSync(target, { mode: 0o700 });
    symlinkSync(target, linked);
    expect(loadCommandBundle(file, { dir: linked, uid: UID }, (write) => writes.push(write)).cache).toBe(
      "off",
    );
    // Another owner: the directory is this process's, but not the user's it was asked for.
    expect(loadCommandBundle(file, { dir: target, uid: UID + 1 }, (write) => writes.push(write)).cache).toBe(
      "off",
    );
    writeFileSync(join(cacheDir, "..", "a-file"), "");
    expect(loadCommandBundle(file, { dir: join(cacheDir, "..", "a-file", "cache"), uid: UID }).cache).toBe(
      "off",
    );
    expect(writes).toEqual([]);
    expect(readdirSync(target)).toEqual([]);
    expect(readdirSync(cacheDir)).toEqual([]);
  });
});

describe("codeCacheOf", () => {
  it("follows Node's switches: NODE_DISABLE_COMPILE_CACHE turns it off, NODE_COMPILE_CACHE moves it", () => {
    expect(codeCacheOf({}, 1000)).toEqual({ dir: join(tmpdir(), "ferry-code-cache-1000"), uid: 1000 });
    expect(codeCacheOf({ NODE_COMPILE_CACHE: "/var/cache/node" }, 1000)).toEqual({
      dir: "/var/cache/node/ferry",
      uid: 1000,
    });
    expect(codeCacheOf({ NODE_DISABLE_COMPILE_CACHE: "1" }, 1000)).toBeUndefined();
    // No user ids (Windows): no owner to check the directory by, so no cache.
    expect(codeCacheOf({}, undefined)).toBeUndefined();
  });
});
