/**
 * Unpacks a chart archive (the `.tgz` `helm package` writes, the layer of an OCI chart) into a
 * folder, refusing anything helm should not be handed: more than the size and file-count limits
 * (checked while inflating, before anything is written), entries that are not regular files or
 * directories (symlinks, hard links, devices), absolute paths and `..` segments, and entries
 * outside the chart's own top folder. The top folder is replaced by `destination`.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { UserError } from "../core/errors.js";

export interface ChartArchiveLimits {
  /** The archive itself (compressed). */
  maxArchiveBytes: number;
  /** Everything it inflates to (tar headers included). */
  maxUnpackedBytes: number;
  maxFiles: number;
  /** A Helm HTTP repository's `index.yaml` (chart-http-repository.ts); default 16 MiB. */
  maxIndexBytes?: number;
}

export const DEFAULT_CHART_ARCHIVE_LIMITS: ChartArchiveLimits = {
  maxArchiveBytes: 10 * 1024 * 1024,
  maxUnpackedBytes: 50 * 1024 * 1024,
  maxFiles: 5000,
  maxIndexBytes: 16 * 1024 * 1024,
};

const BLOCK = 512;

function refuse(what: string, reason: string): never {
  throw new UserError("chart-archive-refused", `${what}: ${reason}; refused before rendering`);
}

function field(header: Buffer, start: number, length: number): string {
  const raw = header.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? raw.length : end).toString("utf8");
}

function octal(header: Buffer, start: number, length: number, what: string): number {
  const text = field(header, start, length).trim();
  if (!/^[0-7]{0,12}$/.test(text)) refuse(what, "a tar header with a malformed number");
  return text === "" ? 0 : parseInt(text, 8);
}

/** The `path` record of a PAX extended header (`<len> path=<value>\n` records). */
function paxPath(body: Buffer): string | undefined {
  let offset = 0;
  while (offset < body.length) {
    const space = body.indexOf(0x20, offset);
    if (space === -1) break;
    const length = Number(body.subarray(offset, space).toString("ascii"));
    if (!Number.isInteger(length) || length <= 0 || offset + length > body.length) break;
    const record = body.subarray(space + 1, offset + length - 1).toString("utf8");
    if (record.startsWith("path=")) return record.slice("path=".length);
    offset += length;
  }
  return undefined;
}

/** The entry's path below the archive's top folder, or refused when it could leave it. */
function relativeEntry(name: string, what: string): { top: string; rest: string } {
  if (name.startsWith("/") || name.includes("\\"))
    refuse(what, `entry ${JSON.stringify(name)} is not relative`);
  const parts = name.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.some((part) => part === "..")) refuse(what, `entry ${JSON.stringify(name)} leaves the archive`);
  if (parts.length === 0) refuse(what, "an entry without a name");
  return { top: parts[0]!, rest: parts.slice(1).join("/") };
}

/** Unpacks `archive` (gzip of tar) into `destination`; `what` names it in errors. */
export async function unpackChartArchive(
  archive: Buffer,
  destination: string,
  what: string,
  limits: ChartArchiveLimits = DEFAULT_CHART_ARCHIVE_LIMITS,
): Promise<void> {
  if (archive.length > limits.maxArchiveBytes)
    refuse(what, `${archive.length} bytes (limit ${limits.maxArchiveBytes})`);
  let tar: Buffer;
  try {
    tar = gunzipSync(archive, { maxOutputLength: limits.maxUnpackedBytes });
  } catch (error) {
    const code = (error as { code?: string }).code;
    refuse(
      what,
      code === "ERR_BUFFER_TOO_LARGE"
        ? `inflates to more than ${limits.maxUnpackedBytes} bytes`
        : "not a gzip archive",
    );
  }
  const files: { rest: string; body: Buffer }[] = [];
  const folders: string[] = [];
  let top: string | undefined;
  let longName: string | undefined;
  let offset = 0;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break; // the end-of-archive blocks
    const size = octal(header, 124, 12, what);
    const type = String.fromCharCode(header[156]!);
    const bodyStart = offset + BLOCK;
    if (bodyStart + size > tar.length) refuse(what, "a truncated tar archive");
    const body = tar.subarray(bodyStart, bodyStart + size);
    offset = bodyStart + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "x") {
      longName = paxPath(body);
      continue;
    }
    if (type === "L") {
      longName = field(body, 0, body.length);
      continue;
    }
    if (type === "g") continue; // global PAX header: nothing Ferry reads
    const prefix = field(header, 345, 155);
    const name = longName ?? (prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
    longName = undefined;
    if (type !== "0" && type !== "\0" && type !== "5")
      refuse(
        what,
        `entry ${JSON.stringify(name)} is not a regular file or folder (tar type ${JSON.stringify(type)})`,
      );
    const entry = relativeEntry(name, what);
    if (top !== undefined && entry.top !== top)
      refuse(what, `entries under both ${JSON.stringify(top)} and ${JSON.stringify(entry.top)}`);
    top = entry.top;
    if (files.length + folders.length >= limits.maxFiles)
      refuse(what, `more than ${limits.maxFiles} entries`);
    if (type === "5") folders.push(entry.rest);
    else if (entry.rest === "") refuse(what, `file ${JSON.stringify(name)} in place of the chart folder`);
    else files.push({ rest: entry.rest, body });
  }
  if (!files.some((file) => file.rest === "Chart.yaml")) refuse(what, "no Chart.yaml in the archive");
  await mkdir(destination, { recursive: true, mode: 0o700 });
  for (const folder of folders) await mkdir(path.join(destination, folder), { recursive: true, mode: 0o700 });
  for (const file of files) {
    const target = path.join(destination, file.rest);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    // `wx`: an entry written twice (or over a folder) fails instead of replacing what is there.
    await writeFile(target, file.body, { flag: "wx", mode: 0o600 });
  }
}
