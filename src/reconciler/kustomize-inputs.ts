/**
 * Checks what kustomize would read before it runs, because its own YAML decoder expands aliases
 * without a budget (a few hundred bytes of nested anchors made it use gigabytes; see
 * docs/security.md) and it fetches remote resources on every cycle. Refused before rendering:
 * - any file under the rendered folder, or referenced from a kustomization reached from it, over
 *   the per-file size, or all of them over the total;
 * - a YAML file with too many documents, too many aliases, or aliases that expand past the budget
 *   (the `yaml` library's `maxAliasCount`);
 * - a reference that leaves the config repo (also through a symlink);
 * - a remote reference not allowed by `--allow-remote-base` (as Flux's kustomize-controller
 *   `--no-remote-bases`: https://github.com/fluxcd/kustomize-controller/pull/638).
 */
import { lstat, readdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { visit } from "yaml";
import { parseAllDocumentsUnique } from "../core/yaml/unique-keys.js";
import { addressProblem } from "../adapters/registry/address-guard.js";
import { referenceHost } from "../core/egress-admission.js";
import { UserError } from "../core/errors.js";
import {
  isAmbiguousHostPath,
  KUSTOMIZATION_FILE_NAMES,
  kustomizationReferences,
  pluginConfigReferences,
  remoteAllowed,
  type KustomizationReference,
} from "../core/kustomize/kustomization-references.js";

export interface InputLimits {
  /** Bytes per file. */
  maxFileBytes: number;
  /** Bytes across every file checked. */
  maxTotalBytes: number;
  /** Files looked at, so a huge tree is refused rather than walked. */
  maxFiles: number;
  maxDocumentsPerFile: number;
  /** Alias nodes per file, and the expansion budget per document (`yaml`'s `maxAliasCount`). */
  maxAliasCount: number;
}

export const DEFAULT_INPUT_LIMITS: InputLimits = {
  maxFileBytes: 4 * 1024 * 1024,
  maxTotalBytes: 10 * 1024 * 1024,
  maxFiles: 5_000,
  maxDocumentsPerFile: 1_000,
  maxAliasCount: 100,
};

const YAML_EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

function isYamlFile(file: string): boolean {
  return YAML_EXTENSIONS.has(path.extname(file).toLowerCase()) || path.basename(file) === "Kustomization";
}

/** Checks one YAML text: documents, alias nodes, alias expansion. Returns the parsed documents' values. */
export function checkYamlText(text: string, where: string, limits: InputLimits): unknown[] {
  // Merge keys (`<<`) as kustomize's YAML 1.1 decoder reads them.
  const documents = parseAllDocumentsUnique(text, { prettyErrors: false, merge: true });
  if (!Array.isArray(documents)) return [];
  if (documents.length > limits.maxDocumentsPerFile) {
    throw new UserError(
      "render-input-too-many-documents",
      `${where}: ${documents.length} YAML documents (limit ${limits.maxDocumentsPerFile} per file)`,
    );
  }
  let aliases = 0;
  for (const document of documents) {
    visit(document, {
      Alias() {
        aliases++;
      },
    });
  }
  if (aliases > limits.maxAliasCount) {
    throw new UserError(
      "render-input-aliases",
      `${where}: ${aliases} YAML aliases (limit ${limits.maxAliasCount} per file); refused before rendering`,
    );
  }
  return documents.map((document, index) => {
    const error = document.errors[0];
    if (error) {
      throw new UserError("invalid-yaml", `${where}: ${error.message.split("\n")[0]}`);
    }
    try {
      return document.toJS({ maxAliasCount: limits.maxAliasCount });
    } catch (cause) {
      throw new UserError(
        "render-input-aliases",
        `${where}${documents.length > 1 ? ` (document ${index + 1})` : ""}: YAML aliases expand past the limit of ${limits.maxAliasCount}; refused before rendering`,
        { cause },
      );
    }
  });
}

export interface InputCheckOptions {
  limits?: Partial<InputLimits>;
  /** `--allow-remote-base` prefixes. */
  allowRemoteBases?: readonly string[];
  /** Tests only: an allowed remote reference may name a loopback or private address. */
  allowPrivateAddressesForTests?: boolean;
  /** The tree after Ferry vendored what it fetches (remote-bases.ts): a remote reference left is one it does not fetch. */
  vendored?: boolean;
}

/** An allowed remote reference, in the kustomization file (real path) that names it. */
export interface AllowedRemote {
  file: string;
  reference: KustomizationReference;
  /** Named by the kustomization itself (not by a generator's configuration file). */
  inKustomization: boolean;
}

/** What the check saw: the kustomization folders kustomize would load, and the remote references it allowed. */
export interface InputCheckResult {
  kustomizationDirs: string[];
  remotes: AllowedRemote[];
  /** The files checked (real paths): what kustomize may read. */
  files: string[];
}

/**
 * Walks the rendered folder and the kustomizations it reaches inside the repo, and throws a
 * UserError for the first input that must not reach kustomize. Returns the files checked (real
 * paths): what kustomize may read.
 */
export async function checkKustomizeInputs(
  root: string,
  folder: string,
  options: InputCheckOptions = {},
): Promise<InputCheckResult> {
  const limits = { ...DEFAULT_INPUT_LIMITS, ...options.limits };
  const allowed = options.allowRemoteBases ?? [];
  const realRoot = await realpath(root);
  const display = (file: string) => path.relative(realRoot, file) || ".";
  const checked = new Map<string, unknown[] | undefined>();
  let files = 0;
  let totalBytes = 0;

  const checkFile = async (file: string): Promise<unknown[] | undefined> => {
    if (checked.has(file)) return checked.get(file);
    if (++files > limits.maxFiles) {
      throw new UserError(
        "render-input-too-many-files",
        `more than ${limits.maxFiles} files to check under ${display(folder)}`,
      );
    }
    const size = (await stat(file)).size;
    if (size > limits.maxFileBytes) {
      throw new UserError(
        "render-input-too-large",
        `${display(file)}: ${size} bytes (limit ${limits.maxFileBytes} per file); refused before rendering`,
      );
    }
    totalBytes += size;
    if (totalBytes > limits.maxTotalBytes) {
      throw new UserError(
        "render-input-too-large",
        `the files kustomize would read exceed ${limits.maxTotalBytes} bytes in total (at ${display(file)})`,
      );
    }
    const values = isYamlFile(file)
      ? checkYamlText(await readFile(file, "utf8"), display(file), limits)
      : undefined;
    checked.set(file, values);
    return values;
  };

  // Every file under the rendered folder (links are not followed here: a referenced link is
  // resolved and checked below).
  const walk = async (dir: string): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      if (name === ".git") continue;
      const full = path.join(dir, name);
      const info = await lstat(full);
      if (info.isDirectory()) await walk(full);
      else if (info.isFile()) await checkFile(full);
    }
  };
  await walk(folder);

  // Then the kustomizations reachable from it, and every file they name.
  const queue = [folder];
  const seenKustomizations = new Set<string>();
  const kustomizationDirs: string[] = [];
  const remotes: AllowedRemote[] = [];
  while (queue.length > 0) {
    const dir = queue.shift()!;
    if (seenKustomizations.has(dir)) continue;
    seenKustomizations.add(dir);
    const entries = await readdir(dir);
    const name = KUSTOMIZATION_FILE_NAMES.find((candidate) => entries.includes(candidate));
    if (!name) continue;
    kustomizationDirs.push(dir);
    const kustomizationFile = await insideRepo(realRoot, path.join(dir, name), display);
    const [kustomization] = (await checkFile(kustomizationFile)) ?? [];
    const references = [...kustomizationReferences(kustomization)];
    const ownCount = references.length;
    for (let index = 0; index < references.length; index++) {
      const reference = references[index]!;
      const where = `${display(kustomizationFile)}: ${reference.field} ${JSON.stringify(reference.value)}`;
      const local = path.resolve(dir, reference.value);
      if (reference.remote) {
        // `config.d/x` looks like a host but is a folder when it exists in the checkout.
        if (isAmbiguousHostPath(reference.value) && (await exists(local))) {
          // fall through to the local checks
        } else if (remoteAllowed(reference.value, allowed)) {
          // Go's HTTP client skips every proxy for a loopback address or `localhost`: refused here.
          const problem = addressProblem(
            referenceHost(reference.value) ?? "",
            !options.allowPrivateAddressesForTests,
          );
          if (problem)
            throw new UserError("remote-base-refused", `${where}: ${problem}; refused before rendering`);
          remotes.push({ file: kustomizationFile, reference, inKustomization: index < ownCount });
          continue;
        } else {
          throw options.vendored ? notFetched(where) : refusedRemote(where, reference);
        }
      }
      if (!(await exists(local))) continue; // kustomize reports a missing file itself
      const real = await insideRepo(realRoot, local, display, where);
      if ((await stat(real)).isDirectory()) {
        if (reference.mayBeDirectory) queue.push(real);
      } else {
        const values = (await checkFile(real)) ?? [];
        // A generator or transformer configuration names files and URLs of its own.
        if (PLUGIN_FIELDS.has(reference.field))
          values.forEach((value, document) =>
            references.push(
              ...pluginConfigReferences(value, `${reference.field} ${display(real)}[${document}]`),
            ),
          );
      }
    }
  }
  return { kustomizationDirs, remotes, files: [...checked.keys()] };
}

const PLUGIN_FIELDS = new Set(["generators", "transformers", "validators"]);

function notFetched(where: string): UserError {
  return new UserError(
    "remote-base-refused",
    `${where} is a remote resource Ferry does not fetch (only resources, bases, components and files a kustomization names itself, over HTTP(S)); kustomize gets no network, so vendor it into the config repo`,
  );
}

function refusedRemote(where: string, reference: KustomizationReference): UserError {
  return new UserError(
    "remote-base-refused",
    `${where} is a remote resource; refused (content outside Git). Vendor it into the config repo, or allow it with ferry reconcile --allow-remote-base ${JSON.stringify(prefixHint(reference.value))}`,
  );
}

/** A sensible allowlist prefix for a reference: its repository, without ref or subfolder. */
function prefixHint(value: string): string {
  return value.split("?")[0]!.split("//").slice(0, 2).join("//").replace(/\/+$/, "");
}

async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch {
    return false;
  }
}

async function insideRepo(
  realRoot: string,
  file: string,
  display: (file: string) => string,
  where?: string,
): Promise<string> {
  const real = await realpath(file);
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) {
    throw new UserError(
      "path-outside-repo",
      `${where ?? display(file)} leaves the config repo; refused before rendering`,
    );
  }
  return real;
}
