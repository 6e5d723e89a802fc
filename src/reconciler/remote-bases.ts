/**
 * Remote kustomize bases, fetched by Ferry and never by the renderer (docs/security.md, "Render
 * network"). Kustomize and helm are Go programs, whose HTTP client reaches `localhost`, 127.0.0.1
 * and ::1 directly whatever the proxy settings say; a base fetched from an allowed prefix could name
 * such an address and reach the pod's own listeners. So, when the input check finds allowed remote
 * references, Ferry:
 *
 * 1. copies the kustomization folders kustomize would load (it reads only under a kustomization's
 *    own folder, `LoadRestrictionsRootOnly`) into a private tree, bounded in files and bytes;
 * 2. fetches each remote reference a kustomization names itself through its filtering proxy
 *    (remote-fetch.ts): a git base with `git` at its ref, a file with a GET; each fetched base is
 *    checked like the config repo (sizes, aliases, remote references against the same prefixes,
 *    nothing leaving the fetched repository) and its own remote references are fetched the same
 *    way, up to a depth and a count;
 * 3. rewrites each reference to the local copy, and checks the whole private tree again with no
 *    remote allowed: kustomize then renders a tree that names no URL, with no network at all.
 */
import { cp, lstat, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fetchThroughProxy } from "../adapters/egress/proxied-fetch.js";
import { startFilteringProxy, type FilteringProxy } from "../adapters/egress/filtering-proxy.js";
import { UserError } from "../core/errors.js";
import { remoteTarget } from "../core/kustomize/remote-target.js";
import {
  checkKustomizeInputs,
  checkYamlText,
  DEFAULT_INPUT_LIMITS,
  type AllowedRemote,
  type InputLimits,
} from "./kustomize-inputs.js";
import { gitCheckout, rewriteReferences } from "./remote-fetch.js";

export interface VendorOptions {
  allowRemoteBases: readonly string[];
  inputLimits?: Partial<InputLimits>;
  allowPrivateAddressesForTests?: boolean;
  /** PATH to find git on (the renderer's). */
  path?: string;
  /** For all the fetching together. */
  timeoutMs: number;
}

export interface VendoredTree {
  root: string;
  folder: string;
  dispose(): Promise<void>;
}

/** Remote references fetched per render, and how deep remote bases may nest. */
export const MAX_REMOTE_FETCHES = 20;
export const MAX_REMOTE_DEPTH = 5;

/**
 * Checks the folder's inputs; with allowed remote references, returns the private vendored tree to
 * render instead (undefined when there are none: the checkout is rendered as it is).
 */
export async function vendorRemoteBases(
  root: string,
  folder: string,
  options: VendorOptions,
): Promise<VendoredTree | undefined> {
  const limits = { ...DEFAULT_INPUT_LIMITS, ...options.inputLimits };
  const check = {
    limits,
    allowRemoteBases: options.allowRemoteBases,
    ...(options.allowPrivateAddressesForTests ? { allowPrivateAddressesForTests: true } : {}),
  };
  const first = await checkKustomizeInputs(root, folder, check);
  if (first.remotes.length === 0) return undefined;
  const work = await realpath(await mkdtemp(path.join(tmpdir(), "ferry-vendor-")));
  const dispose = () => rm(work, { recursive: true, force: true });
  let proxy: FilteringProxy | undefined;
  try {
    const realRoot = await realpath(root);
    const tree = path.join(work, "tree");
    await copyFolders(realRoot, first.kustomizationDirs, tree, limits);
    proxy = await startFilteringProxy({
      allowedPrefixes: options.allowRemoteBases,
      maxBytes: limits.maxTotalBytes * 4,
      ...(options.allowPrivateAddressesForTests ? { allowPrivateAddressesForTests: true } : {}),
    });
    const home = path.join(work, "git-home");
    await mkdir(home);
    const deadline = Date.now() + options.timeoutMs;
    const clones = new Map<string, string>();
    const checkedBases = new Set<string>();
    let fetches = 0;
    const inTree = (file: string) => path.join(tree, path.relative(realRoot, file));

    const vendor = async (remotes: AllowedRemote[], locate: (file: string) => string, depth: number) => {
      const byFile = new Map<string, AllowedRemote[]>();
      for (const remote of remotes.filter(fetchable))
        byFile.set(locate(remote.file), [...(byFile.get(locate(remote.file)) ?? []), remote]);
      for (const [file, found] of byFile) {
        const replacements = new Map<string, string>();
        for (const { reference } of found) {
          if (replacements.has(reference.value)) continue;
          const where = `${display(work, realRoot, file)}: ${reference.field} ${JSON.stringify(reference.value)}`;
          const target = remoteTarget(reference.value, reference.mayBeDirectory);
          if ("problem" in target)
            throw new UserError(
              "remote-base-refused",
              `${where}: ${target.problem}; refused before rendering`,
            );
          if (++fetches > MAX_REMOTE_FETCHES || depth >= MAX_REMOTE_DEPTH)
            throw new UserError(
              "remote-base-refused",
              `${where}: more than ${MAX_REMOTE_FETCHES} remote references, or remote bases nested deeper than ${MAX_REMOTE_DEPTH}; refused before rendering`,
            );
          const timeoutMs = Math.max(1, deadline - Date.now());
          const fail = (error: unknown) => {
            if (!(error instanceof UserError)) throw error;
            const refused = proxy!.refusals();
            throw new UserError(
              error.code,
              `${where}: ${error.message}${refused.length > 0 ? `; the proxy refused ${refused.join("; ")}` : ""}`,
              { cause: error },
            );
          };
          if (target.kind === "file") {
            const body = await fetchThroughProxy(proxy!.url, target.url, {
              maxBytes: limits.maxFileBytes,
              timeoutMs,
              maxRedirects: 5,
            }).catch(fail);
            checkYamlText(body.toString("utf8"), where, limits);
            const name = `.ferry-remote-${fetches}${path.extname(new URL(target.url).pathname) || ".yaml"}`;
            await writeFile(path.join(path.dirname(file), name), body, { flag: "wx" });
            replacements.set(reference.value, name);
            continue;
          }
          const key = `${target.repository}@${target.ref ?? ""}`;
          let clone = clones.get(key);
          if (clone === undefined) {
            clone = path.join(work, "remote", String(clones.size));
            await gitCheckout({
              repository: target.repository,
              ...(target.ref !== undefined ? { ref: target.ref } : {}),
              dir: clone,
              proxyUrl: proxy!.url,
              home,
              prefixes: options.allowRemoteBases,
              path: options.path,
              timeoutMs,
            }).catch(fail);
            clones.set(key, clone);
          }
          const base = path.join(clone, target.subfolder);
          const real = await realpath(base).catch(() => {
            throw new UserError(
              "remote-base-refused",
              `${where}: ${target.subfolder || "."} is not in the fetched repository`,
            );
          });
          if (real !== clone && !real.startsWith(clone + path.sep))
            throw new UserError("remote-base-refused", `${where}: leaves the fetched repository`);
          if (!checkedBases.has(real)) {
            checkedBases.add(real);
            const nested = await checkKustomizeInputs(clone, real, check).catch((error: unknown) => {
              if (error instanceof UserError)
                throw new UserError(error.code, `${where} (fetched): ${error.message}`, { cause: error });
              throw error;
            });
            await vendor(nested.remotes, (nestedFile) => nestedFile, depth + 1);
          }
          replacements.set(reference.value, path.relative(path.dirname(file), real) || ".");
        }
        await rewriteReferences(file, replacements);
      }
    };
    await vendor(first.remotes, inTree, 0);
    const vendoredFolder = inTree(await realpath(folder));
    await checkKustomizeInputs(work, vendoredFolder, { limits, vendored: true });
    return { root: work, folder: vendoredFolder, dispose };
  } catch (error) {
    await dispose();
    throw error;
  } finally {
    await proxy?.close();
  }
}

/**
 * What Ferry vendors: a reference the kustomization names itself, except a Helm chart repository
 * (an index that may point anywhere, fetched by helm): left in place, the final check refuses it.
 */
function fetchable(remote: AllowedRemote): boolean {
  return remote.inKustomization && !/(^|\.)(repo|chartRepoUrl)$/.test(remote.reference.field);
}

function display(work: string, realRoot: string, file: string): string {
  const inTree = path.relative(path.join(work, "tree"), file);
  return inTree.startsWith("..")
    ? `(fetched) ${path.relative(work, file)}`
    : inTree || path.relative(realRoot, file);
}

/**
 * Copies each folder (and what is under it; not `.git`) into `tree` at the same place relative to
 * `realRoot`, links as they are, within the file count and four times the byte total of the check.
 */
async function copyFolders(
  realRoot: string,
  dirs: string[],
  tree: string,
  limits: InputLimits,
): Promise<void> {
  const sorted = [...new Set(dirs)].sort();
  const tops = sorted.filter(
    (dir, index) => !sorted.slice(0, index).some((top) => dir.startsWith(top + path.sep)),
  );
  let files = 0;
  let bytes = 0;
  for (const dir of tops) {
    await cp(dir, path.join(tree, path.relative(realRoot, dir)), {
      recursive: true,
      verbatimSymlinks: true,
      filter: async (source) => {
        if (path.basename(source) === ".git") return false;
        const info = await lstat(source);
        bytes += info.isFile() ? info.size : 0;
        if (++files > limits.maxFiles || bytes > limits.maxTotalBytes * 4)
          throw new UserError(
            "render-input-too-large",
            `the kustomization folders to copy for vendoring exceed ${limits.maxFiles} files or ${limits.maxTotalBytes * 4} bytes`,
          );
        return true;
      },
    });
  }
}
