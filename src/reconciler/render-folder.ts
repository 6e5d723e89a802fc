/**
 * The render step: a checked-out folder → validated objects. A folder with a kustomization file
 * has its inputs checked (kustomize-inputs.ts), then goes through kustomize as a bounded child
 * process (adapters/render/render-tools.ts); a folder with a `Chart.yaml` (and no kustomization) has its inputs checked
 * (chart-inputs.ts) and goes through `helm template` the same way; any other folder is read as
 * plain manifests, recursively, in sorted order. With `sops` set (the reconciler), SOPS-encrypted
 * files are decrypted first into a private copy of the tree the render then reads (sops-decrypt.ts).
 */
import { lstat, readdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { UserError } from "../core/errors.js";
import { KUSTOMIZATION_FILE_NAMES } from "../core/kustomize/kustomization-references.js";
import { checkKustomizeInputs, type InputLimits } from "./kustomize-inputs.js";
import {
  DEFAULT_RENDER_LIMITS,
  parseManifests,
  RenderBudget,
  type RenderedObject,
  type RenderLimits,
} from "./parse-manifests.js";
import type { ChartArchiveLimits } from "./chart-archive.js";
import type { ChartDependencyPin } from "./chart-dependencies.js";
import type { ChartRegistry } from "./ports.js";
import { CHART_SOURCE_FILE, renderChart, renderChartSource } from "./render-chart.js";
import { withDecryptedTree, type DecryptedTree, type SopsOptions } from "./sops-decrypt.js";
import { markDecryptedSecrets } from "./sops-provenance.js";
import { vendorRemoteBases, type VendoredTree } from "./remote-bases.js";
import {
  DEFAULT_RENDERER_LIMITS,
  kubectlRenderer,
  kustomizeRenderer,
  runRenderer,
  type Renderer,
} from "../adapters/render/render-tools.js";

export const KUSTOMIZATION_FILES = KUSTOMIZATION_FILE_NAMES;
const MANIFEST_EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

export interface RenderOptions {
  limits?: Partial<RenderLimits>;
  /** The kubectl binary for `kubectl kustomize`. */
  kubectl?: string;
  /** The renderer to run; kubectl, else kustomize, from PATH when neither this nor `kubectl` is set. */
  renderer?: Renderer;
  kustomizeTimeoutMs?: number;
  /** The renderer's memory (data) limit in bytes (`--render-memory-limit`). */
  memoryLimitBytes?: number;
  /** Limits on what kustomize would read, checked before it runs. */
  inputLimits?: Partial<InputLimits>;
  /**
   * `--allow-remote-base` prefixes; remote resources are refused without one, and those allowed are
   * fetched by Ferry, never by kustomize (remote-bases.ts).
   */
  allowRemoteBases?: readonly string[];
  /** Tests only: Ferry's fetch of remote bases may reach loopback and private addresses (a local remote base). */
  allowPrivateAddressesForTests?: boolean;
  /**
   * Where the renderer's few variables (PATH, HOME…: render-environment.ts) are taken from; the
   * process's own when absent. Nothing else reaches it: no token, key or password.
   */
  env?: NodeJS.ProcessEnv;
  /**
   * A chart folder (with `Chart.yaml`) is rendered by `helm template` with these repo-relative
   * values files after the chart's own values.yaml (`--helm-values`).
   */
  helmValues?: readonly string[];
  /**
   * Values files Ferry itself wrote outside the repository (an Argo CD Application's
   * `helm.values`/`parameters`, for `ferry diff`), applied last; absolute paths.
   */
  generatedHelmValues?: readonly string[];
  /** `.Release.Namespace` for a chart (the reconciler's namespace). */
  helmNamespace?: string;
  /** The helm binary; `helm` from PATH when absent. */
  helm?: string;
  /**
   * Decrypt SOPS-encrypted files before rendering (sops-decrypt.ts). Only the reconciler sets it:
   * the App's renders (ferry/diff, plans) never decrypt.
   */
  sops?: SopsOptions;
  /**
   * Where a chart's `oci://` dependencies are downloaded from (chart-dependencies.ts); without it
   * they must be committed in the chart's `charts/` folder.
   */
  chartRegistry?: ChartRegistry;
  /** Limits on each downloaded chart archive. */
  chartArchiveLimits?: ChartArchiveLimits;
}

/**
 * Resolves `relative` inside `root` and refuses anything that escapes it, including by symlink
 * (Argo CD keeps out-of-bounds symlinks off for the same reason).
 */
export async function resolveInside(root: string, relative: string): Promise<string> {
  const realRoot = await realpath(root);
  const candidate = path.resolve(realRoot, relative);
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    throw new UserError(
      "path-not-found",
      `path ${JSON.stringify(relative)} does not exist in the config repo`,
    );
  }
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) {
    throw new UserError("path-outside-repo", `path ${JSON.stringify(relative)} leaves the config repo`);
  }
  return real;
}

export async function renderPath(
  root: string,
  relative: string,
  options: RenderOptions = {},
): Promise<RenderedObject[]> {
  return (await renderPathWithSources(root, relative, options)).objects;
}

/** What a render produced: the objects, and the chart dependencies it downloaded (pinned by digest). */
export interface RenderResult {
  objects: RenderedObject[];
  charts: ChartDependencyPin[];
}

export async function renderPathWithSources(
  root: string,
  relative: string,
  options: RenderOptions = {},
): Promise<RenderResult> {
  if (!options.sops) return renderTree(root, relative, options);
  // Without an environment, sops gets none (it still finds itself on this process PATH).
  const sops = {
    ...options.sops,
    ...(options.memoryLimitBytes !== undefined ? { memoryLimitBytes: options.memoryLimitBytes } : {}),
  };
  return withDecryptedTree(root, sops, options.env ?? {}, async (copy, tree) => {
    const result = await renderTree(copy, relative, options, tree);
    return tree ? { ...result, objects: markDecryptedSecrets(result.objects, tree.values) } : result;
  });
}

/** `tree`: the private copy's decryptor, told which files the render reads once they are checked. */
async function renderTree(
  root: string,
  relative: string,
  options: RenderOptions,
  tree?: DecryptedTree,
): Promise<RenderResult> {
  const limits = { ...DEFAULT_RENDER_LIMITS, ...options.limits };
  const folder = await resolveInside(root, relative);
  const budget = new RenderBudget(limits);
  if (!(await stat(folder)).isDirectory()) {
    await tree?.decrypt([folder]);
    return {
      objects: parseManifests(await readCapped(folder, limits.maxBytes), relative, budget),
      charts: [],
    };
  }
  const entries = await readdir(folder);
  const rendererLimits = {
    timeoutMs: options.kustomizeTimeoutMs ?? DEFAULT_RENDERER_LIMITS.timeoutMs,
    maxOutputBytes: limits.maxBytes,
    memoryLimitBytes: options.memoryLimitBytes ?? DEFAULT_RENDERER_LIMITS.memoryLimitBytes,
  };
  // Once a chart's inputs are checked: its encrypted files decrypted, and Ferry's own values files
  // (outside the repo, so never checked as its inputs) applied last.
  const afterInputCheck = async (valuesFiles: readonly string[]): Promise<string[]> => {
    await tree?.decryptUnder(folder);
    await tree?.decrypt(valuesFiles);
    return [...(options.generatedHelmValues ?? [])];
  };
  if (entries.includes(CHART_SOURCE_FILE) && !entries.includes("Chart.yaml")) {
    const valuesFiles: string[] = [];
    for (const file of options.helmValues ?? []) valuesFiles.push(await resolveInside(root, file));
    return renderChartSource(
      root,
      folder,
      relative,
      valuesFiles,
      { ...options, afterInputCheck },
      rendererLimits,
      budget,
      resolveInside,
    );
  }
  if (entries.includes("Chart.yaml") && !KUSTOMIZATION_FILES.some((name) => entries.includes(name))) {
    const valuesFiles: string[] = [];
    for (const file of options.helmValues ?? []) valuesFiles.push(await resolveInside(root, file));
    return renderChart(
      root,
      folder,
      relative,
      valuesFiles,
      { ...options, afterInputCheck },
      rendererLimits,
      budget,
    );
  }
  if (KUSTOMIZATION_FILES.some((name) => entries.includes(name))) {
    // Allowed remote bases are fetched by Ferry into a private tree (remote-bases.ts); kustomize
    // then renders a tree that names no URL, and its proxy admits nothing. The encrypted files the
    // check found kustomize reading are decrypted first, so the vendored copy holds them decrypted.
    const vendored = await checkOrVendor(root, folder, options, rendererLimits.timeoutMs, tree);
    // helmCharts are inflated by helm from the renderer's PATH (kustomize says so when it is missing).
    const helm = options.helm ?? "helm";
    const renderers = options.renderer
      ? [options.renderer]
      : options.kubectl
        ? [kubectlRenderer(options.kubectl, helm)]
        : [kubectlRenderer(undefined, helm), kustomizeRenderer(undefined, helm)];
    const output = await runRenderer(renderers, vendored?.folder ?? folder, rendererLimits, {
      ...(options.env ? { env: options.env } : {}),
      allowedPrefixes: [],
    })
      .catch((error: unknown) => {
        if (error instanceof UserError && error.code === "renderer-missing")
          throw new UserError("renderer-missing", `cannot render ${relative}: ${error.message}`);
        throw error;
      })
      .finally(() => vendored?.dispose());
    return { objects: parseManifests(output, `kustomize build ${relative}`, budget), charts: [] };
  }
  const objects: RenderedObject[] = [];
  const realRoot = await realpath(root);
  await tree?.decryptUnder(folder);
  for (const file of await listManifestFiles(folder)) {
    const display = path.relative(realRoot, file);
    objects.push(...parseManifests(await readCapped(file, limits.maxBytes - budget.bytes), display, budget));
  }
  return { objects, charts: [] };
}

/**
 * The input check, then the decryption of the encrypted files it found kustomize reading; with
 * `--allow-remote-base` and remote bases named, the vendored tree to render.
 */
async function checkOrVendor(
  root: string,
  folder: string,
  options: RenderOptions,
  timeoutMs: number,
  tree: DecryptedTree | undefined,
): Promise<VendoredTree | undefined> {
  const allowRemoteBases = options.allowRemoteBases ?? [];
  const checked = await checkKustomizeInputs(root, folder, {
    ...(options.inputLimits ? { limits: options.inputLimits } : {}),
    ...(allowRemoteBases.length > 0 ? { allowRemoteBases } : {}),
    ...(options.allowPrivateAddressesForTests ? { allowPrivateAddressesForTests: true } : {}),
  });
  await tree?.decrypt(checked.files);
  if (checked.remotes.length === 0) return undefined;
  // git is found on the renderer's PATH; without one, on the system's default search path.
  const searchPath = options.env?.PATH;
  return vendorRemoteBases(root, folder, {
    allowRemoteBases,
    timeoutMs,
    ...(options.inputLimits ? { inputLimits: options.inputLimits } : {}),
    ...(options.allowPrivateAddressesForTests ? { allowPrivateAddressesForTests: true } : {}),
    ...(searchPath !== undefined ? { path: searchPath } : {}),
  });
}

async function readCapped(file: string, remainingBytes: number): Promise<string> {
  const size = (await stat(file)).size;
  // Check before reading, so a huge file is refused without loading it.
  if (size > remainingBytes)
    throw new UserError("render-too-large", `${path.basename(file)}: manifests exceed the size limit`);
  return readFile(file, "utf8");
}

/** Every manifest file under `folder`, sorted by path; hidden entries and symlinks are skipped. */
async function listManifestFiles(folder: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const names = (await readdir(dir)).sort();
    for (const name of names) {
      if (name.startsWith(".")) continue;
      const full = path.join(dir, name);
      const info = await lstat(full);
      if (info.isSymbolicLink()) continue;
      if (info.isDirectory()) await walk(full);
      else if (info.isFile() && MANIFEST_EXTENSIONS.has(path.extname(name).toLowerCase())) found.push(full);
    }
  };
  await walk(folder);
  return found.sort();
}
