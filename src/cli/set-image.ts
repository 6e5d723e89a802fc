import { lstat, readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { writeFileAtomic } from "../adapters/fs/write-file-atomic.js";
import { UserError } from "../core/errors.js";
import { parseImageRef } from "../core/image-ref.js";
import type { FindOptions } from "../core/targets/index.js";
import { stripTagAndDigest } from "../core/yaml-edit/plan-edits.js";
import { updateImage, type ImageUpdate } from "../core/yaml-edit/update-image.js";
import { EXIT, UsageError, type CliIo } from "./io.js";

const USAGE = "usage: ferry set-image [--name IMAGE_NAME] FILE IMAGE[:TAG][@DIGEST]";

/**
 * `ferry set-image FILE IMAGE[:TAG][@DIGEST]`: edits every reference to IMAGE in FILE and prints
 * `FILE:LINE old -> new` per edit. TAG alone pins the tag, TAG@DIGEST both, @DIGEST the digest
 * only. `--name` is the Ferry image name that `# ferry: <name>` markers use.
 */
export async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { name: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    io.stdout(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length !== 2) throw new UsageError(USAGE);
  const [file, reference] = positionals as [string, string];
  const update = imageUpdate(reference);
  const path = resolve(io.cwd, file);

  const stats = await lstat(path).catch(() => undefined);
  if (!stats) throw new UserError("file-not-found", `${file} does not exist`);
  if (stats.isSymbolicLink())
    throw new UserError("symlink-refused", `${file} is a symlink; Ferry never writes through symlinks`);
  if (!stats.isFile()) throw new UserError("not-a-file", `${file} is not a regular file`);
  const text = await readFile(path, "utf8");

  const options: FindOptions = { fileName: file };
  if (values.name !== undefined) options.markerName = values.name;
  // One parse, narrowed to what can hold the image (docs/architecture.md "Editing files"), both
  // finds the references and edits them.
  const result = updateImage(text, update, options);
  if (!result.referenced) {
    io.stderr(`ferry set-image: ${update.image} is not referenced in ${file}\n`);
    return EXIT.noMatch;
  }
  if (result.edits.length > 0) await writeFileAtomic(path, result.text);
  for (const edit of result.edits)
    io.stdout(`${file}:${edit.line} ${edit.from === "" ? "(none)" : edit.from} -> ${edit.to}\n`);
  if (result.edits.length === 0) io.stdout(`${file}: already ${reference}\n`);
  return EXIT.ok;
}

/** IMAGE:TAG → pin tag; IMAGE:TAG@DIGEST → pin digest; IMAGE@DIGEST → digest only. */
function imageUpdate(reference: string): ImageUpdate {
  const parsed = parseImageRef(reference);
  const image = stripTagAndDigest(reference);
  if (parsed.tag !== undefined && parsed.digest !== undefined)
    return { image, tag: parsed.tag, digest: parsed.digest, pin: "digest" };
  if (parsed.tag !== undefined) return { image, tag: parsed.tag, pin: "tag" };
  if (parsed.digest !== undefined) return { image, digest: parsed.digest, pin: "digest-only" };
  throw new UsageError(`IMAGE needs a :TAG or an @DIGEST\n${USAGE}`);
}
