/** Files written into a fresh temporary directory: a checkout for `ferry plan`, `ferry check` or `ferry set-image`. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach } from "vitest";

/** Writes `files` (path → text) under a new directory named `prefix…` and returns the directory. */
export function writeTempTree(prefix: string, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

/** A fresh directory for each test of the file, removed after it: `dir` names it, `put` writes a file in it. */
export function tempDirPerTest(prefix: string): {
  readonly dir: string;
  put(path: string, text: string): Promise<void>;
} {
  let dir: string | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const current = (): string => {
    if (!dir) throw new Error("tempDirPerTest: no test is running");
    return dir;
  };
  return {
    get dir() {
      return current();
    },
    async put(path, text) {
      await mkdir(dirname(join(current(), path)), { recursive: true });
      await writeFile(join(current(), path), text);
    },
  };
}
