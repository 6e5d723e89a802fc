import { randomBytes } from "node:crypto";
import { lstat, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { UserError } from "../../core/errors.js";

/**
 * Replaces a file's content atomically: a temporary file beside it, then rename, so a reader
 * never sees half a file. Refuses to write through a symlink (docs/reliability.md row 15); keeps the
 * file's mode.
 */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const existing = await lstat(path).catch(() => undefined);
  if (existing?.isSymbolicLink())
    throw new UserError("symlink-refused", `${path} is a symlink; Ferry never writes through symlinks`);
  const mode = existing ? (await stat(path)).mode & 0o7777 : 0o644;
  const temporary = join(dirname(path), `.${basename(path)}.ferry-${randomBytes(6).toString("hex")}`);
  try {
    await writeFile(temporary, content, { encoding: "utf8", mode, flag: "wx" });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
